import { describe, expect, it } from "vitest";
import { storedRounds } from "./message-runs.js";
import type { LogEvent } from "./run-records.js";

const started: LogEvent = {
  type: "started",
  messageId: "msg_1",
  agentId: "agt_1",
  userId: undefined,
  roomId: undefined,
};
const call = (id: string): LogEvent => ({ type: "tool.call", id, name: "lab__add", arguments: "{}" });
const result = (id: string): LogEvent => ({
  type: "tool.result",
  call: { id, name: "lab__add", arguments: "{}", ok: true, output: id },
});
const delta = (text: string): LogEvent => ({ type: "delta", text });
const logged = (...events: LogEvent[]) => events.map((event, i) => ({ seq: i + 1, event }));

describe("storedRounds", () => {
  it("finds no round in a log without tool calls: the whole answer is generated again", () => {
    expect(storedRounds(logged(started, delta("half an "), delta("answer")))).toEqual([]);
  });

  it("splits the log into rounds, each with its text, its calls and their outcomes, and drops the unfinished text", () => {
    const rounds = storedRounds(
      logged(
        started,
        delta("Let me "),
        delta("look. "),
        call("c1"),
        call("c2"),
        result("c2"),
        result("c1"),
        // The next round, without text, then one with text cut short.
        call("c3"),
        result("c3"),
        delta("The sum "),
      ),
    );
    expect(rounds).toEqual([
      {
        text: "Let me look. ",
        calls: [
          { id: "c1", name: "lab__add", arguments: "{}" },
          { id: "c2", name: "lab__add", arguments: "{}" },
        ],
        outcomes: [
          { id: "c1", name: "lab__add", arguments: "{}", ok: true, output: "c1" },
          { id: "c2", name: "lab__add", arguments: "{}", ok: true, output: "c2" },
        ],
      },
      {
        text: "",
        calls: [{ id: "c3", name: "lab__add", arguments: "{}" }],
        outcomes: [{ id: "c3", name: "lab__add", arguments: "{}", ok: true, output: "c3" }],
      },
    ]);
  });

  it("keeps a round whose outcomes are partly stored, the missing ones unset (those tools run again)", () => {
    const [round] = storedRounds(logged(started, call("c1"), call("c2"), result("c2")));
    expect(round?.outcomes).toEqual([
      undefined,
      { id: "c2", name: "lab__add", arguments: "{}", ok: true, output: "c2" },
    ]);
  });
});
