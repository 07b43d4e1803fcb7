import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Harness, Tenant } from "./harness.js";
import {
  type Answer,
  expectError,
  type HistoryWorld,
  MISSING,
  newAgent,
  type Page,
  query,
  say,
  startHistoryWorld,
} from "./history-helpers.js";

let world: HistoryWorld;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  world = await startHistoryWorld();
  ({ h, tenant } = world);
});
afterAll(() => world.close());
beforeEach(() => world.openai.reset());

interface MemoryJson {
  id: string;
  agentId: string;
  userId: string;
  text: string;
  source: { messageId: string } | null;
  createdAt: string;
}
type MemoryAnswer = Answer<{ success: boolean; data: MemoryJson }>;

const add = (agentId: string, body: unknown, key = tenant.key) =>
  h.request("POST", `/v1/agents/${agentId}/memories`, { key, body }) as Promise<MemoryAnswer>;

const list = (agentId: string, params: Record<string, string> = {}, key: string | null = tenant.key) =>
  h.request("GET", `/v1/agents/${agentId}/memories${query(params)}`, { key }) as Promise<
    Answer<Page<MemoryJson>>
  >;

const remove = (agentId: string, memoryId: string, key = tenant.key) =>
  h.request("DELETE", `/v1/agents/${agentId}/memories/${memoryId}`, { key }) as Promise<
    Answer<{ success: boolean; data: { id: string; deleted: true } }>
  >;

async function textsOf(agentId: string, params: Record<string, string> = {}): Promise<string[]> {
  const res = await list(agentId, params);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.map((memory) => memory.text);
}

const systemPrompt = () =>
  String(world.openai.lastRequest.body.messages?.find((m) => m.role === "system")?.content ?? "");

describe("/v1/agents/{agentId}/memories", () => {
  it("adds a memory (the same fact once), lists it by user and by words, and deletes it", async () => {
    const agentId = await newAgent(h, tenant.key);
    const created = await add(agentId, { userId: "u1", text: "  The user's favourite colour is teal. " });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const memory = created.body.data;
    expect(memory).toEqual({
      id: expect.stringMatching(/^mem_[0-9A-HJKMNP-TV-Z]{26}$/),
      agentId,
      userId: "u1",
      text: "The user's favourite colour is teal.",
      source: null,
      createdAt: expect.stringMatching(/Z$/),
    });
    const again = await add(agentId, { userId: "u1", text: "the user's favourite colour is TEAL" });
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe(memory.id);
    await add(agentId, { userId: "u1", text: "The user owns a bicycle." });
    await add(agentId, { userId: "u2", text: "The user's favourite colour is red." });

    expect(await textsOf(agentId, { userId: "u1" })).toEqual([
      "The user owns a bicycle.",
      "The user's favourite colour is teal.",
    ]);
    expect(await textsOf(agentId, { q: "favourite colours" })).toEqual([
      "The user's favourite colour is red.",
      "The user's favourite colour is teal.",
    ]);
    const page = await list(agentId, { limit: "1", order: "asc" });
    expect(page.body.data.map((m) => m.id)).toEqual([memory.id]);
    expect(page.body.pagination).toEqual({ limit: 1, hasMore: true });

    const deleted = await remove(agentId, memory.id);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { id: memory.id, deleted: true } });
    expectError(await remove(agentId, memory.id), 404, "MEMORY_NOT_FOUND");
    expectError(await remove(agentId, "mem_nope"), 404, "MEMORY_NOT_FOUND");
    expect(await textsOf(agentId, { userId: "u1" })).toEqual(["The user owns a bicycle."]);
  });

  it("refuses bad input with a 400 naming the field", async () => {
    const agentId = await newAgent(h, tenant.key);
    expectError(await add(agentId, { text: "x" }), 400, "INVALID_REQUEST", "userId");
    expectError(await add(agentId, { userId: "u1", text: "   " }), 400, "INVALID_REQUEST", "text");
    expectError(await add(agentId, { userId: "u1", text: "a".repeat(1001) }), 400, "INVALID_REQUEST", "text");
    expectError(await add(agentId, { userId: "u1", text: "ok", extra: 1 }), 400, "INVALID_REQUEST");
    // A fact added by hand is kept as written, symbols alone included.
    const symbols = await add(agentId, { userId: "u1", text: " ?! " });
    expect(symbols.status).toBe(201);
    expect(symbols.body.data.text).toBe("?!");
    expectError(await list(agentId, { limit: "0" }), 400, "INVALID_REQUEST", "limit");
    expectError(await list(agentId, { before: "msg_x" }), 400, "INVALID_REQUEST", "before");
    expectError(
      await list(agentId, { before: MISSING.message.replace("msg", "mem") }),
      400,
      "INVALID_REQUEST",
      "before",
    );
  });

  it("answers an unknown agent, or another account's, as missing", async () => {
    const agentId = await newAgent(h, tenant.key);
    const { body } = await add(agentId, { userId: "u1", text: "The user is a pilot." });
    const other = await h.tenant();
    expectError(await list(agentId, {}, other.key), 404, "AGENT_NOT_FOUND");
    expectError(await add(agentId, { userId: "u1", text: "x1" }, other.key), 404, "AGENT_NOT_FOUND");
    expectError(await remove(agentId, body.data.id, other.key), 404, "AGENT_NOT_FOUND");
    expectError(await list(MISSING.agent), 404, "AGENT_NOT_FOUND");
    // Another agent of the same account does not have it either.
    const second = await newAgent(h, tenant.key);
    expectError(await remove(second, body.data.id), 404, "MEMORY_NOT_FOUND");
  });

  it("needs a key, history:read to list and history:delete to add or delete", async () => {
    const agentId = await newAgent(h, tenant.key);
    const { body } = await add(agentId, { userId: "u1", text: "The user is a chef." });
    expectError(await list(agentId, {}, null), 401, "UNAUTHORIZED");
    const reader = await tenant.keyWith(["history:read"]);
    const deleter = await tenant.keyWith(["history:delete"]);
    expect((await list(agentId, {}, reader.key)).status).toBe(200);
    expectError(await list(agentId, {}, deleter.key), 403, "FORBIDDEN");
    expectError(await add(agentId, { userId: "u1", text: "x2" }, reader.key), 403, "FORBIDDEN");
    expectError(await remove(agentId, body.data.id, reader.key), 403, "FORBIDDEN");
    expect((await add(agentId, { userId: "u1", text: "x3" }, deleter.key)).status).toBe(201);
    expect((await remove(agentId, body.data.id, deleter.key)).status).toBe(200);
  });
});

describe("memories in turns", () => {
  it("learns from a turn and recalls it in that user's later prompts only", async () => {
    const agentId = await newAgent(h, tenant.key);
    world.openai.answerExtraction(["The user is allergic to peanuts."]);
    await say(h, tenant.key, agentId, "Note that I am allergic to peanuts.", {
      userId: "pat",
      roomId: "kitchen",
    });
    await world.openai.waitForExtractions(1);
    let memories: MemoryJson[] = [];
    for (let i = 0; i < 100 && memories.length === 0; i++) {
      memories = (await list(agentId, { userId: "pat" })).body.data;
      if (memories.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(memories.map((m) => m.text)).toEqual(["The user is allergic to peanuts."]);
    expect(memories[0]!.source?.messageId).toMatch(/^msg_/);

    // Another room of the same user, a week later as far as the agent knows.
    await say(h, tenant.key, agentId, "Can I eat peanuts?", { userId: "pat", roomId: "dining" });
    expect(systemPrompt()).toContain("- The user is allergic to peanuts.");
    await say(h, tenant.key, agentId, "Can I eat peanuts?", { userId: "sam" });
    expect(systemPrompt()).not.toContain("allergic");
  });

  it("learns nothing with settings.memory false, and refuses a bad memoryLimit", async () => {
    const created = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Forgetful", settings: { memory: false } },
    });
    expect(created.status).toBe(201);
    await say(h, tenant.key, created.body.data.id, "I am a vegan.", { userId: "val" });
    await say(h, tenant.key, created.body.data.id, "Again.", { userId: "val" });
    // A probe after them: extractions are asked in order, so this one's arrival means theirs would have.
    world.openai.answerExtraction([]);
    await say(h, tenant.key, await newAgent(h, tenant.key), "probe", { userId: "val" });
    const asked = () => world.openai.extractions.map((request) => JSON.stringify(request.body.messages));
    while (!asked().some((text) => text.includes("probe"))) {
      await world.openai.waitForExtractions(world.openai.extractions.length + 1);
    }
    expect(asked().filter((text) => text.includes("vegan") || text.includes("Again."))).toEqual([]);

    const bad = await h.request("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Bad", settings: { memoryLimit: 0, memory: "yes" } },
    });
    expectError(bad as never, 400, "INVALID_REQUEST", "settings.memoryLimit");
    expect(
      (bad.body as { error: { details: { field: string }[] } }).error.details.map((d) => d.field),
    ).toContain("settings.memory");
  });
});

describe("export and erasure", () => {
  it("exports a user's memories after their messages and erases them with the user", async () => {
    const agentId = await newAgent(h, tenant.key);
    await say(h, tenant.key, agentId, "hi", { userId: "zed" });
    await add(agentId, { userId: "zed", text: "The user is called Zed." });
    await add(agentId, { userId: "yan", text: "The user is called Yan." });

    const res = await fetch(`${h.url}/v1/users/zed/export`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string; text: string; role?: string });
    expect(lines.map((line) => line.text)).toEqual(["hi", "Echo: hi", "The user is called Zed."]);
    expect(lines[2]).toMatchObject({ id: expect.stringMatching(/^mem_/), userId: "zed", source: null });
    expect(lines[2]!.role).toBeUndefined();

    const erased = await h.request("DELETE", "/v1/users/zed", { key: tenant.key });
    expect(erased.status).toBe(200);
    expect(await textsOf(agentId)).toEqual(["The user is called Yan."]);
    await say(h, tenant.key, agentId, "What is my name?", { userId: "zed" });
    expect(systemPrompt()).not.toContain("Zed");
  });
});
