import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openSqliteConversationStore } from "../src/store/sqlite.js";
import type { ConversationStore, NewExchange, QueueJoin } from "../src/store/types.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

/** What a message wrote to its conversation's line, through the store. */
interface LineWrites {
  joins: QueueJoin[];
  admits: number;
  leaves: number;
  /** The places the stored exchanges left. */
  leftWithExchange: string[];
}

/** The SQLite store, its writes to the conversations' lines counted. */
function counted(store: ConversationStore): { store: ConversationStore; writes: LineWrites } {
  const writes: LineWrites = { joins: [], admits: 0, leaves: 0, leftWithExchange: [] };
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === "joinConversation") {
        return async (...args: Parameters<ConversationStore["joinConversation"]>) => {
          const joined = await target.joinConversation(...args);
          writes.joins.push(joined);
          return joined;
        };
      }
      if (prop === "admitTurn") {
        return async (...args: Parameters<ConversationStore["admitTurn"]>) => {
          writes.admits += 1;
          return target.admitTurn(...args);
        };
      }
      if (prop === "leaveConversation") {
        return async (...args: Parameters<ConversationStore["leaveConversation"]>) => {
          writes.leaves += 1;
          return target.leaveConversation(...args);
        };
      }
      if (prop === "saveExchange") {
        return async (exchange: NewExchange, ...rest: unknown[]) => {
          const saved = await (target.saveExchange as (...args: unknown[]) => Promise<boolean>)(
            exchange,
            ...rest,
          );
          if (exchange.leaves) writes.leftWithExchange.push(exchange.leaves.id);
          return saved;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: wrapped, writes };
}

let dataDir: string;
let h: Harness;
let writes: LineWrites;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "conversation-line-"));
  const line = counted(openSqliteConversationStore({ dataDir }));
  writes = line.writes;
  h = await startHarness({ dataDir, store: line.store });
});

afterAll(async () => {
  await h?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(() => {
  h.openai.reset();
  writes.joins = [];
  writes.admits = 0;
  writes.leaves = 0;
  writes.leftWithExchange = [];
});

describe("a message's place in its conversation's line", () => {
  it("is admitted by its join in an empty line and left by the transaction that stores its exchange", async () => {
    const a = agent();
    h.openai.reply("first answer");
    const json = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "first" });
    expect(writes).toEqual({ joins: ["admitted"], admits: 0, leaves: 0, leftWithExchange: [json.reply!.id] });

    h.openai.reply("streamed answer");
    let streamed = "";
    for await (const response of h.client.streamMessage({ accountId: ACCOUNT, agent: a, text: "second" })) {
      if (response.event.case === "completed") streamed = response.event.value.id;
    }
    expect(streamed).not.toBe("");
    expect(writes.leftWithExchange).toEqual([json.reply!.id, streamed]);
    expect(writes.leaves).toBe(0);

    // The line is empty: a send that refuses to wait is answered, and its prompt has both exchanges.
    h.openai.reply("third answer");
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "third", onConflict: "reject" });
    const request = h.openai.requests.at(-1)!;
    const texts = request.body.messages.map((message) => message.content);
    expect(texts).toEqual(
      expect.arrayContaining(["first", "first answer", "second", "streamed answer", "third"]),
    );
  });

  it("is left on its own by a message that stores no reply", async () => {
    const a = agent();
    h.openai.failWith(500);
    const error = await failure(h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hi" }));
    expect(error.code).toBe("AGENT_UNAVAILABLE");
    expect(writes).toEqual({ joins: ["admitted"], admits: 0, leaves: 1, leftWithExchange: [] });
    h.openai.reply("answer");
    const reply = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "again",
      onConflict: "reject",
    });
    expect(reply.reply!.text).toBe("answer");
  });

  it("waits behind the message in progress, and is admitted once that one's exchange is stored", async () => {
    const a = agent();
    h.openai.answer({ text: "first answer", delayMs: 300 });
    h.openai.reply("second answer");
    const first = h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "first" });
    await expect.poll(() => h.openai.requests.length).toBe(1);
    const second = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "second" });
    const answered = await first;
    expect(answered.reply!.text).toBe("first answer");
    expect(second.reply!.text).toBe("second answer");
    expect(writes.joins).toEqual(["admitted", "waiting"]);
    expect(writes.admits).toBeGreaterThan(0);
    expect(writes.leftWithExchange).toEqual([answered.reply!.id, second.reply!.id]);
    expect(writes.leaves).toBe(0);
    const prompt = h.openai.requests[1]!.body.messages.map((message) => message.content);
    expect(prompt).toEqual(expect.arrayContaining(["first", "first answer", "second"]));
  });
});
