import type { StreamMessageResponse } from "@agentry/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT, agent, type Harness, startHarness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

async function events(stream: AsyncIterable<StreamMessageResponse>) {
  const all: StreamMessageResponse["event"][] = [];
  for await (const response of stream) all.push(response.event);
  return all;
}

describe("StreamMessage", () => {
  it.each(["openai", "anthropic"] as const)(
    "%s: sends started, then the deltas, then completed with their concatenation, and stores that reply",
    async (provider) => {
      const fake = provider === "openai" ? h.openai : h.anthropic;
      const a = agent({ modelProvider: provider, name: "Streamer" });
      fake.answer({ chunks: ["Once ", "upon ", "a ", "time", "."], usage: { input: 40, output: 5 } });
      const all = await events(
        h.client.streamMessage({
          accountId: ACCOUNT,
          agent: a,
          text: "Tell me a story",
          userId: "u9",
          roomId: "r9",
        }),
      );

      expect(all.map((e) => e.case)).toEqual([
        "started",
        "delta",
        "delta",
        "delta",
        "delta",
        "delta",
        "completed",
      ]);
      const started = all[0]!;
      const completed = all[all.length - 1]!;
      if (started.case !== "started" || completed.case !== "completed") throw new Error("unexpected order");
      expect(started.value).toMatchObject({ agentId: a.id, userId: "u9", roomId: "r9" });
      const deltas = all.flatMap((e) => (e.case === "delta" ? [e.value.text] : []));
      expect(deltas).toEqual(["Once ", "upon ", "a ", "time", "."]);
      expect(completed.value).toMatchObject({
        id: started.value.messageId,
        agentId: a.id,
        userId: "u9",
        roomId: "r9",
        text: deltas.join(""),
        modelProvider: provider,
        finishReason: "stop",
        usage: { inputTokens: 40, outputTokens: 5, totalTokens: 45 },
      });

      const body = fake.lastRequest.body as Record<string, unknown>;
      expect(body.stream).toBe(true);
      if (provider === "openai") expect(body.stream_options).toEqual({ include_usage: true });

      const { turns } = await h.client.listTurns({
        accountId: ACCOUNT,
        agentId: a.id,
        userId: "u9",
        roomId: "r9",
      });
      expect(turns.map((t) => t.text)).toEqual(["Tell me a story", "Once upon a time."]);
      expect(turns[1]!.id).toBe(started.value.messageId);
      const [call] = await h.conversation.store.listCalls(ACCOUNT, a.id);
      expect(call).toMatchObject({ outcome: "completed", stream: true, inputTokens: 40, outputTokens: 5 });
      expect(call!.firstTokenMs).not.toBeNull();
    },
  );

  it("completes an empty reply with started and completed only", async () => {
    h.openai.answer({ chunks: [] });
    const all = await events(
      h.client.streamMessage({ accountId: ACCOUNT, agent: agent(), text: "say nothing" }),
    );
    expect(all.map((e) => e.case)).toEqual(["started", "completed"]);
    const completed = all[1]!;
    expect(completed.case === "completed" && completed.value.text).toBe("");
  });

  it("continues the conversation that non-streamed messages started, and the other way round", async () => {
    const a = agent();
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "first" });
    await events(h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "second" }));
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "third" });
    expect(h.openai.lastRequest.body.messages.slice(1).map((m) => m.content)).toEqual([
      "first",
      "Echo: first",
      "second",
      "Echo: second",
      "third",
    ]);
  });
});

describe("time to first token", () => {
  it("runs from receiving the message to the reply's first text, streamed or not, and is what usage counts", async () => {
    const streamed = agent({ name: "Streamer" });
    h.openai.answer({ chunks: ["Once ", "upon ", "a ", "time."], delayMs: 150, chunkDelayMs: 120 });
    await events(h.client.streamMessage({ accountId: ACCOUNT, agent: streamed, text: "Tell me a story" }));
    const [stream] = await h.conversation.store.listCalls(ACCOUNT, streamed.id);
    expect(stream!.firstTokenMs).toBeGreaterThanOrEqual(150);
    // The other three chunks came 120 ms apart after it.
    expect(stream!.latencyMs - stream!.firstTokenMs!).toBeGreaterThanOrEqual(300);

    const whole = agent({ name: "Whole" });
    h.openai.answer({ text: "All at once.", delayMs: 150 });
    await h.client.sendMessage({ accountId: ACCOUNT, agent: whole, text: "Tell me a story" });
    const [sent] = await h.conversation.store.listCalls(ACCOUNT, whole.id);
    // A reply not streamed begins when it arrives: all of it but storing it.
    expect(sent!.firstTokenMs).toBeGreaterThanOrEqual(150);
    expect(sent!.latencyMs - sent!.firstTokenMs!).toBeLessThan(50);

    for (const [a, record] of [
      [streamed, stream!],
      [whole, sent!],
    ] as const) {
      const usage = await h.conversation.store.getUsage({ accountId: ACCOUNT, agentId: a.id });
      const { timeToFirstTokenMs, latencyMs } = usage.totals[0]!.figures;
      expect(Math.abs(timeToFirstTokenMs.p50! - record.firstTokenMs!)).toBeLessThanOrEqual(
        record.firstTokenMs! * 0.01,
      );
      expect(Math.abs(latencyMs.p50! - record.latencyMs)).toBeLessThanOrEqual(record.latencyMs * 0.01);
    }
  });
});
