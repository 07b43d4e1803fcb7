import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageStatus } from "@agentry/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT, agent, type Harness, startHarness } from "./harness.js";

/** Two conversation services on one SQLite file, as two processes would share it. */
let dataDir: string;
let a: Harness;
let b: Harness;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "conversation-cancel-"));
  const runLeases = { leaseMs: 1_000, renewMs: 100, scanMs: 100 };
  a = await startHarness({ dataDir, runLeases });
  b = await startHarness({ dataDir, runLeases });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("CancelAgentRuns (the kill switch)", () => {
  it("stops every background message of the agent, on the process generating it too, and stores nothing", async () => {
    const looping = agent();
    const other = agent();
    const slow = { chunks: Array.from({ length: 100 }, (_, i) => `w${i} `), chunkDelayMs: 100 };
    a.openai.answer(slow);
    a.openai.answer(slow);
    a.openai.reply("the other agent's reply");
    // Two conversations: one conversation's second message would wait for its first.
    const first = await a.client.startMessage({
      accountId: ACCOUNT,
      agent: looping,
      text: "loop",
      userId: "u1",
    });
    const second = await a.client.startMessage({
      accountId: ACCOUNT,
      agent: looping,
      text: "loop again",
      userId: "u2",
    });
    const kept = await a.client.startMessage({ accountId: ACCOUNT, agent: other, text: "carry on" });
    await expect.poll(() => a.openai.requests.length).toBe(3);

    // Asked of the other process: the generating one stops them when it next renews their leases.
    const { cancelled } = await b.client.cancelAgentRuns({ accountId: ACCOUNT, agentId: looping.id });
    expect(cancelled).toBe(2);
    const outcomes = await Promise.all(a.openai.requests.slice(0, 2).map((request) => request.outcome));
    expect(outcomes).toEqual(["aborted", "aborted"]);
    for (const { messageId } of [first, second]) {
      const state = await a.client.getMessage({ accountId: ACCOUNT, agentId: looping.id, messageId });
      expect(state.background).toMatchObject({
        status: MessageStatus.CANCELLED,
        error: { code: "AGENT_UNAVAILABLE" },
      });
    }
    const stored = await b.client.listMessages({
      accountId: ACCOUNT,
      agentId: looping.id,
      page: { limit: 10 },
    });
    expect(stored.messages).toEqual([]);
    // Another agent's message is not touched.
    await expect
      .poll(async () => {
        const state = await b.client.getMessage({
          accountId: ACCOUNT,
          agentId: other.id,
          messageId: kept.messageId,
        });
        return state.background?.status ?? state.message?.text;
      })
      .toBe(MessageStatus.COMPLETED);
    // Nothing left to stop.
    expect((await a.client.cancelAgentRuns({ accountId: ACCOUNT, agentId: looping.id })).cancelled).toBe(0);
  }, 30_000);
});
