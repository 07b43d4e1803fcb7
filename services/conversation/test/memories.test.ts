import { isId } from "@agentry/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EXTRACTION_PROMPT } from "../src/memories.js";
import type { OpenAIChatBody } from "../src/testing/index.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.openai.reset());

const HEADING = "What you remember about this user from earlier conversations:";

function systemOf(body: OpenAIChatBody): string {
  return String(body.messages?.find((m) => m.role === "system")?.content ?? "");
}

async function remember(agentId: string, userId: string, text: string, limit = 0) {
  const { memory } = await h.client.createMemory({ accountId: ACCOUNT, agentId, userId, text, limit });
  return memory!;
}

async function memoriesOf(agentId: string, userId: string): Promise<string[]> {
  const { memories } = await h.client.listMemories({ accountId: ACCOUNT, agentId, userId });
  return memories.map((m) => m.text);
}

describe("recall", () => {
  it("puts the user's relevant memories in the system prompt, and never another user's or another agent's", async () => {
    const a = agent();
    const other = agent();
    await remember(a.id, "alice", "The user's favourite colour is teal.");
    await remember(a.id, "alice", "The user plays the cello.");
    await remember(a.id, "bob", "The user's favourite colour is orange.");
    await remember(other.id, "alice", "The user's favourite colour is violet.");

    const text = "Which colour do I like best?";
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text, userId: "alice", roomId: "r1" });
    const alice = systemOf(h.openai.lastRequest.body);
    expect(alice).toContain(`${HEADING}\n- The user's favourite colour is teal.`);
    expect(alice).not.toMatch(/orange|violet/);
    // Relevance: the cello says nothing about colours.
    expect(alice).not.toContain("cello");

    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text, userId: "bob" });
    const bob = systemOf(h.openai.lastRequest.body);
    expect(bob).toContain("- The user's favourite colour is orange.");
    expect(bob).not.toMatch(/teal|violet/);

    // A message without a user has no memories; nor does a user the agent knows nothing of.
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text });
    expect(systemOf(h.openai.lastRequest.body)).not.toContain(HEADING);
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text, userId: "carol" });
    expect(systemOf(h.openai.lastRequest.body)).not.toContain(HEADING);

    // The user's memories reach every room of that user, in streams too.
    for await (const _ of h.client.streamMessage({
      accountId: ACCOUNT,
      agent: a,
      text,
      userId: "alice",
      roomId: "r2",
    })) {
      // drained
    }
    expect(systemOf(h.openai.lastRequest.body)).toContain("teal");
    await h.conversation.memories.idle();
  });
});

describe("extraction", () => {
  it("asks the agent's model for the user's durable facts after a turn and stores the new ones", async () => {
    const a = agent({ model: "gpt-4o" });
    h.openai.reply("Lisbon is lovely in spring.", { usage: { input: 30, output: 5 } });
    h.openai.answerExtraction({
      text: 'Here you go:\n```json\n{"facts": ["The user lives in Lisbon.", "The user has two cats."]}\n```',
      usage: { input: 120, output: 20 },
    });
    const { reply } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "I live in Lisbon with my two cats.",
      userId: "dora",
    });
    // The reply did not wait for the extraction.
    expect(reply?.text).toBe("Lisbon is lovely in spring.");
    const request = await h.openai.waitForExtractions(1);
    await h.conversation.memories.idle();
    expect(request.body.model).toBe("gpt-4o");
    expect(systemOf(request.body)).toBe(EXTRACTION_PROMPT);
    const asked = String(request.body.messages?.at(-1)?.content);
    expect(asked).toContain("User: I live in Lisbon with my two cats.");
    expect(asked).toContain("Assistant: Lisbon is lovely in spring.");

    const { memories } = await h.client.listMemories({ accountId: ACCOUNT, agentId: a.id, userId: "dora" });
    expect(memories.map((m) => m.text)).toEqual(["The user has two cats.", "The user lives in Lisbon."]);
    const { messages } = await h.client.listMessages({ accountId: ACCOUNT, agentId: a.id, userId: "dora" });
    const message = messages.find((m) => m.text === "I live in Lisbon with my two cats.")!;
    for (const memory of memories) {
      expect(isId("memory", memory.id)).toBe(true);
      expect(memory.sourceMessageId).toBe(message.id);
    }

    // Its tokens count in the usage of the agent and the user, as tokens only.
    const usage = await h.client.getUsage({ accountId: ACCOUNT, agentId: a.id });
    const totals = usage.totals[0]!.figures!;
    expect(totals).toMatchObject({ messages: 1n, errors: 0n, inputTokens: 150n, outputTokens: 25n });
  });

  it("shows the model what is known and stores nothing twice", async () => {
    const a = agent();
    await remember(a.id, "ed", "The user is a vegetarian.");
    h.openai.answerExtraction(["the user is a VEGETARIAN", "The user is training for a marathon.", "  "]);
    await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "As a vegetarian training for a marathon, what should I eat?",
      userId: "ed",
    });
    const request = await h.openai.waitForExtractions(1);
    await h.conversation.memories.idle();
    expect(String(request.body.messages?.at(-1)?.content)).toContain(
      "Facts already known:\n- The user is a vegetarian.",
    );
    expect(await memoriesOf(a.id, "ed")).toEqual([
      "The user is training for a marathon.",
      "The user is a vegetarian.",
    ]);
  });

  it("keeps at most settings.memoryLimit per user, the oldest evicted", async () => {
    const a = agent({ settings: { memoryLimit: 2 } });
    await remember(a.id, "fay", "The user was born in 1990.", 2);
    h.openai.answerExtraction(["The user speaks Welsh.", "The user drives a van."]);
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "Shwmae!", userId: "fay" });
    await h.openai.waitForExtractions(1);
    await h.conversation.memories.idle();
    expect(await memoriesOf(a.id, "fay")).toEqual(["The user drives a van.", "The user speaks Welsh."]);
  });

  it("is not asked when settings.memory is false, and nothing is recalled either", async () => {
    const a = agent({ settings: { memory: false } });
    await remember(a.id, "gus", "The user's favourite colour is green.");
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "My favourite colour?", userId: "gus" });
    await h.conversation.memories.idle();
    expect(h.openai.extractions).toHaveLength(0);
    expect(systemOf(h.openai.lastRequest.body)).not.toContain(HEADING);
  });

  it("never fails the turn: a failed or unreadable extraction only stores nothing", async () => {
    const a = agent();
    h.openai.answerExtraction({ status: 500 });
    h.openai.answerExtraction({ text: "I cannot comply." });
    const first = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "one", userId: "hal" });
    const second = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "two", userId: "hal" });
    expect([first.reply?.text, second.reply?.text]).toEqual(["Echo: one", "Echo: two"]);
    await h.openai.waitForExtractions(2);
    await h.conversation.memories.idle();
    expect(await memoriesOf(a.id, "hal")).toEqual([]);
  });
});

describe("memory RPCs", () => {
  it("adds by hand (the same text once), lists with a query, and deletes", async () => {
    const a = agent();
    const tea = await remember(a.id, "ivy", "The user likes green tea.");
    expect(tea.sourceMessageId).toBe("");
    const again = await h.client.createMemory({
      accountId: ACCOUNT,
      agentId: a.id,
      userId: "ivy",
      text: "the user likes green tea!",
    });
    expect(again).toMatchObject({ created: false, memory: { id: tea.id } });
    await remember(a.id, "ivy", "The user owns a bicycle.");
    const found = await h.client.listMemories({ accountId: ACCOUNT, agentId: a.id, query: "tea" });
    expect(found.memories.map((m) => m.id)).toEqual([tea.id]);

    await h.client.deleteMemory({ accountId: ACCOUNT, agentId: a.id, memoryId: tea.id });
    expect(await memoriesOf(a.id, "ivy")).toEqual(["The user owns a bicycle."]);
    const gone = await failure(
      h.client.deleteMemory({ accountId: ACCOUNT, agentId: a.id, memoryId: tea.id }),
    );
    expect(gone.code).toBe("MEMORY_NOT_FOUND");
  });

  it("refuses a memory without a user or without text", async () => {
    const a = agent();
    const noUser = await failure(
      h.client.createMemory({ accountId: ACCOUNT, agentId: a.id, userId: "", text: "x" }),
    );
    expect(noUser.code).toBe("INVALID_REQUEST");
    const noText = await failure(
      h.client.createMemory({ accountId: ACCOUNT, agentId: a.id, userId: "u", text: "  \n " }),
    );
    expect(noText.code).toBe("INVALID_REQUEST");
    const long = await failure(
      h.client.createMemory({ accountId: ACCOUNT, agentId: a.id, userId: "u", text: "a".repeat(1001) }),
    );
    expect(long.message).toContain("1000");
  });

  it("exports a user's memories after their messages, and erases them with the user", async () => {
    const a = agent();
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "hello", userId: "jo" });
    await h.conversation.memories.idle();
    await remember(a.id, "jo", "The user is called Jo.");
    await remember(a.id, "kim", "The user is called Kim.");
    const pages = [];
    for await (const page of h.client.exportUser({ accountId: ACCOUNT, userId: "jo" })) pages.push(page);
    expect(pages.flatMap((p) => p.messages.map((m) => m.text))).toEqual(["hello", "Echo: hello"]);
    expect(pages.flatMap((p) => p.memories.map((m) => m.text))).toEqual(["The user is called Jo."]);
    expect(pages.at(-1)!.messages).toEqual([]);

    await h.client.eraseUser({ accountId: ACCOUNT, userId: "jo" });
    expect(await memoriesOf(a.id, "jo")).toEqual([]);
    expect(await memoriesOf(a.id, "kim")).toEqual(["The user is called Kim."]);
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "What is my name?", userId: "jo" });
    expect(systemOf(h.openai.lastRequest.body)).not.toContain(HEADING);
    await h.conversation.memories.idle();
  });
});
