import { isId } from "@agentry/core";
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT, agent, failure, type Harness, OPENAI_KEY, startHarness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const profile = {
  name: "Ada",
  bio: ["Mathematician from London", "Wrote the first program"],
  personality: { traits: ["curious", "precise"], style: "concise" },
  knowledge: ["analytical engines", "poetry"],
  goals: ["explain computing clearly"],
};

describe("SendMessage", () => {
  it("answers with the provider's reply in the documented shape", async () => {
    const a = agent();
    h.openai.answer({ text: "Hello there", usage: { input: 21, output: 3 } });
    const before = Date.now();
    const { reply } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "hi",
      userId: "u1",
      roomId: "r1",
    });
    expect(reply).toBeDefined();
    expect(isId("message", reply!.id)).toBe(true);
    expect(reply).toMatchObject({
      agentId: a.id,
      userId: "u1",
      roomId: "r1",
      text: "Hello there",
      model: "gpt-4o-mini",
      modelProvider: "openai",
      finishReason: "stop",
      usage: { inputTokens: 21, outputTokens: 3, totalTokens: 24 },
    });
    expect(reply!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(timestampDate(reply!.createTime!).getTime()).toBeGreaterThanOrEqual(before - 1);

    const body = h.openai.lastRequest.body;
    expect(body.model).toBe("gpt-4o-mini");
    expect(body.max_completion_tokens).toBe(1024);
    expect(body).not.toHaveProperty("temperature");
    expect(body.stream).toBe(false);
    expect(h.openai.lastRequest.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it("leaves userId and roomId unset in the reply when the message had none", async () => {
    const { reply } = await h.client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: "hi" });
    expect(reply?.userId).toBeUndefined();
    expect(reply?.roomId).toBeUndefined();
  });

  it("reports the provider's finish reason in the common vocabulary", async () => {
    h.openai.answer({ text: "cut sho", finishReason: "length" });
    const { reply } = await h.client.sendMessage({ accountId: ACCOUNT, agent: agent(), text: "long story" });
    expect(reply?.finishReason).toBe("length");
    h.anthropic.answer({ text: "cut sho", finishReason: "max_tokens" });
    const viaAnthropic = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: agent({ modelProvider: "anthropic" }),
      text: "long story",
    });
    expect(viaAnthropic.reply?.finishReason).toBe("length");
  });

  it("reads an agent's JSON fields from their text, in preference to the Struct form", async () => {
    const { personality, ...rest } = profile;
    const a = agent({
      ...rest,
      personality: { style: "ignored: the text is read" },
      personalityJson: JSON.stringify(personality),
      settingsJson: JSON.stringify({ temperature: 0.25, maxTokens: 77 }),
      pluginsJson: "[]",
      clientsJson: "[]",
    });
    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "Who are you?", userId: "u-json" });
    const { body } = h.openai.lastRequest;
    const system = body.messages[0]?.content ?? "";
    expect(system).toContain("- traits: curious, precise");
    expect(system).toContain("- style: concise");
    expect(system).not.toContain("ignored");
    expect(body).toMatchObject({ temperature: 0.25, max_completion_tokens: 77 });
  });

  it("sends the agent's profile and the caller's context as system prompt, and never stores the context", async () => {
    const a = agent(profile);
    await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "What can you do?",
      userId: "u1",
      context: { page: "checkout", cart: { items: 3 } },
    });
    const first = h.openai.lastRequest.body.messages;
    expect(first[0]?.role).toBe("system");
    const system = first[0]!.content ?? "";
    for (const part of [
      "You are Ada",
      "- Mathematician from London",
      "- Wrote the first program",
      "- traits: curious, precise",
      "- style: concise",
      "- analytical engines",
      "- explain computing clearly",
      '{"page":"checkout","cart":{"items":3}}',
    ]) {
      expect(system).toContain(part);
    }
    expect(system.indexOf("You are Ada")).toBeLessThan(system.indexOf("checkout"));
    expect(first.slice(1)).toEqual([{ role: "user", content: "What can you do?" }]);

    await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text: "And now?", userId: "u1" });
    const second = h.openai.lastRequest.body.messages;
    expect(second[0]!.content).not.toContain("checkout");
    expect(second.slice(1).map((m) => m.content)).toEqual([
      "What can you do?",
      "Echo: What can you do?",
      "And now?",
    ]);

    const { turns } = await h.client.listTurns({ accountId: ACCOUNT, agentId: a.id, userId: "u1" });
    expect(turns.map((t) => t.text)).toEqual([
      "What can you do?",
      "Echo: What can you do?",
      "And now?",
      "Echo: And now?",
    ]);
    const stored = {
      turns: (
        await h.conversation.store.listTurns(
          { accountId: ACCOUNT, agentId: a.id, userId: "u1", roomId: "" },
          { limit: 100, cursor: null },
        )
      ).turns,
      calls: await h.conversation.store.listCalls(ACCOUNT, a.id),
    };
    expect(stored.turns.length).toBe(4);
    expect(JSON.stringify(stored)).not.toContain("checkout");
  });

  it("gives the Anthropic Messages API the same prompt, with the system prompt as its own parameter", async () => {
    const a = agent({ ...profile, modelProvider: "anthropic", model: "claude-test-1" });
    h.anthropic.reply("Bonjour");
    const { reply } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "hello",
      context: { locale: "fr" },
    });
    expect(reply).toMatchObject({
      text: "Bonjour",
      model: "claude-test-1",
      modelProvider: "anthropic",
      finishReason: "stop",
    });
    const body = h.anthropic.lastRequest.body;
    expect(body.model).toBe("claude-test-1");
    expect(body.max_tokens).toBe(1024);
    expect(body.system).toContain("You are Ada");
    expect(body.system).toContain('{"locale":"fr"}');
    expect(body.messages).toEqual([{ role: "user", content: "hello" }]);
    expect(h.anthropic.lastRequest.headers["x-api-key"]).toBe("sk-ant-test-0123456789");
  });

  it("keeps context per (agent, userId, roomId) and never lets it cross users, rooms or agents", async () => {
    const a = agent();
    const b = agent();
    const send = (target: typeof a, text: string, userId?: string, roomId?: string) =>
      h.client.sendMessage({
        accountId: ACCOUNT,
        agent: target,
        text,
        ...(userId === undefined ? {} : { userId }),
        ...(roomId === undefined ? {} : { roomId }),
      });
    await send(a, "I am Ann in room one", "ann", "one");
    await send(a, "I am Bob in room one", "bob", "one");
    await send(a, "I am Ann in room two", "ann", "two");
    await send(a, "I am Ann without a room", "ann");
    await send(a, "Nobody in particular");
    await send(b, "I am Ann talking to B", "ann", "one");

    const history = async (target: typeof a, userId?: string, roomId?: string) => {
      await send(target, "who am I?", userId, roomId);
      return h.openai.lastRequest.body.messages.slice(1).map((m) => m.content);
    };
    expect(await history(a, "ann", "one")).toEqual([
      "I am Ann in room one",
      "Echo: I am Ann in room one",
      "who am I?",
    ]);
    expect(await history(a, "bob", "one")).toEqual([
      "I am Bob in room one",
      "Echo: I am Bob in room one",
      "who am I?",
    ]);
    expect(await history(a, "ann", "two")).toEqual([
      "I am Ann in room two",
      "Echo: I am Ann in room two",
      "who am I?",
    ]);
    expect(await history(a, "ann")).toEqual([
      "I am Ann without a room",
      "Echo: I am Ann without a room",
      "who am I?",
    ]);
    expect(await history(a)).toEqual(["Nobody in particular", "Echo: Nobody in particular", "who am I?"]);
    expect(await history(b, "ann", "one")).toEqual([
      "I am Ann talking to B",
      "Echo: I am Ann talking to B",
      "who am I?",
    ]);
    expect(await history(agent(), "ann", "one")).toEqual(["who am I?"]);
  });

  it("applies settings.temperature and settings.maxTokens, on both providers", async () => {
    const settings = { temperature: 0.25, maxTokens: 200 };
    await h.client.sendMessage({ accountId: ACCOUNT, agent: agent({ settings }), text: "hi" });
    expect(h.openai.lastRequest.body).toMatchObject({ temperature: 0.25, max_completion_tokens: 200 });
    await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: agent({ settings, modelProvider: "anthropic" }),
      text: "hi",
    });
    expect(h.anthropic.lastRequest.body).toMatchObject({ temperature: 0.25, max_tokens: 200 });
  });

  it.each([
    [{ temperature: 2.5 }, "settings.temperature"],
    [{ temperature: -0.1 }, "settings.temperature"],
    [{ temperature: "hot" }, "settings.temperature"],
    [{ maxTokens: 0 }, "settings.maxTokens"],
    [{ maxTokens: 8193 }, "settings.maxTokens"],
    [{ maxTokens: 10.5 }, "settings.maxTokens"],
  ])("refuses settings %j out of bounds with INVALID_REQUEST naming %s", async (settings, field) => {
    const requests = h.openai.requests.length;
    const error = await failure(
      h.client.sendMessage({ accountId: ACCOUNT, agent: agent({ settings }), text: "hi" }),
    );
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.message).toContain(field);
    expect(error.details).toEqual([{ field, issue: expect.any(String) }]);
    expect(h.openai.requests.length).toBe(requests);
  });

  it("accepts the bounds themselves", async () => {
    const cases: JsonObject[] = [
      { temperature: 0, maxTokens: 1 },
      { temperature: 2, maxTokens: 8192 },
      { temperature: null, maxTokens: null, discord: { token: "x" } },
    ];
    for (const settings of cases) {
      const { reply } = await h.client.sendMessage({
        accountId: ACCOUNT,
        agent: agent({ settings }),
        text: "hi",
      });
      expect(reply?.text).toBe("Echo: hi");
    }
  });

  it("refuses a malformed request with INVALID_REQUEST before calling the provider", async () => {
    const requests = h.openai.requests.length;
    const cases = [
      { accountId: ACCOUNT, agent: agent(), text: "" },
      { accountId: ACCOUNT, agent: agent(), text: "x".repeat(100_001) },
      { accountId: ACCOUNT, text: "hi" },
      { accountId: "", agent: agent(), text: "hi" },
      { accountId: "acct_other", agent: agent(), text: "hi" },
    ];
    for (const request of cases) {
      const error = await failure(h.client.sendMessage(request));
      expect(error.code).toBe("INVALID_REQUEST");
    }
    expect(h.openai.requests.length).toBe(requests);
    const { reply } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: agent(),
      text: "é".repeat(100_000),
    });
    expect(reply?.text.length).toBeGreaterThan(100_000);
  });
});

describe("SendMessage with a small context budget", () => {
  let small: Harness;
  beforeAll(async () => {
    small = await startHarness({ contextTokenBudget: 40 });
  });
  afterAll(() => small.close());

  it("sends only the most recent turns that fit, starting with a user turn, and always the new message", async () => {
    const a = agent();
    const long = (n: number) => `${n} ${"word ".repeat(12)}`.trim();
    for (let i = 1; i <= 4; i++) {
      small.openai.reply(`reply ${i}`);
      await small.client.sendMessage({ accountId: ACCOUNT, agent: a, text: long(i) });
    }
    const huge = "z".repeat(2_000);
    await small.client.sendMessage({ accountId: ACCOUNT, agent: a, text: huge });
    const messages = small.openai.lastRequest.body.messages.slice(1);
    // Budget 40: "reply 4" (2+4) and long(4) (16+4) fit; "reply 3" would too, but then long(3) would not,
    // and history must not start with a reply.
    expect(messages.map((m) => m.content)).toEqual([long(4), "reply 4", huge]);
  });
});
