import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { Tier } from "@agentry/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness } from "./harness.js";

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "k",
    DEFAULT_MODEL_PROVIDER: "openai",
  });
});
afterAll(async () => {
  await h.close();
  await openai.close();
});

const nowSeconds = () => Date.now() / 1000;

function expectHeaders(headers: Headers, limit: number) {
  expect(headers.get("x-ratelimit-limit")).toBe(String(limit));
  expect(Number(headers.get("x-ratelimit-remaining"))).toBeGreaterThanOrEqual(0);
  const reset = Number(headers.get("x-ratelimit-reset"));
  expect(reset).toBeGreaterThan(nowSeconds());
  expect(reset).toBeLessThanOrEqual(nowSeconds() + 61);
}

describe("rate limits on one gateway", () => {
  it("names the bucket it reports: the endpoint's when it has less left, else the account's", async () => {
    const t = await h.tenant({ tier: Tier.STANDARD });
    const listed = await h.request("GET", "/v1/agents", { key: t.key });
    // Listing: 60 a minute for the account and for listings; the account's is reported on a tie.
    expect(listed.headers.get("x-ratelimit-bucket")).toMatch(/^(requestsPerMinute|listPerMinute)$/);
    const created = await h.request("POST", "/v1/agents", { key: t.key, body: { name: "a" } });
    expect(created.headers.get("x-ratelimit-bucket")).toBe("createPerMinute");
    const invalid = await h.request("POST", "/v1/agents", { key: t.key, body: { nope: 1 } });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("x-ratelimit-bucket")).toBe("createPerMinute");
  });

  it("reports the tightest bucket on success and on errors", async () => {
    const t = await h.tenant({ tier: Tier.STANDARD });
    const ok = await h.request("GET", "/v1/agents", { key: t.key });
    expect(ok.status).toBe(200);
    expectHeaders(ok.headers, 60);
    expect(ok.headers.get("x-ratelimit-remaining")).toBe("59");
    const created = await h.request("POST", "/v1/agents", { key: t.key, body: { name: "a" } });
    expectHeaders(created.headers, 10);
    expect(created.headers.get("x-ratelimit-remaining")).toBe("9");
    const invalid = await h.request("POST", "/v1/agents", { key: t.key, body: { nope: 1 } });
    expect(invalid.status).toBe(400);
    expectHeaders(invalid.headers, 10);
    expect(invalid.headers.get("x-ratelimit-remaining")).toBe("8");
    const missing = await h.request("GET", "/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA", { key: t.key });
    expect(missing.status).toBe(404);
    expectHeaders(missing.headers, 60);
  });

  it("refuses the 11th create in a minute with 429, Retry-After and the reset it matches", async () => {
    const t = await h.tenant({ tier: Tier.STANDARD });
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof h.request<ErrorBody>>> | undefined;
    for (let i = 0; i < 11; i++) {
      const res = await h.request<ErrorBody>("POST", "/v1/agents", { key: t.key, body: { name: `a${i}` } });
      statuses.push(res.status);
      if (res.status === 429) refused = res;
    }
    expect(statuses).toEqual([...Array(10).fill(201), 429]);
    expect(refused!.body.error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(refused!.body.error.message).toMatch(/10 agent creations per minute/);
    expect(refused!.headers.get("x-ratelimit-remaining")).toBe("0");
    const retryAfter = Number(refused!.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(58);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const reset = Number(refused!.headers.get("x-ratelimit-reset"));
    expect(Math.abs(reset - nowSeconds() - retryAfter)).toBeLessThanOrEqual(2);
    // The account's other endpoints still answer: only the create bucket is empty.
    expect((await h.request("GET", "/v1/agents", { key: t.key })).status).toBe(200);
  });

  it("allows exactly the tier limit of 100 simultaneous requests", async () => {
    const t = await h.tenant({ limits: { requestsPerMinute: 60, listPerMinute: 1000 } });
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => h.request("GET", "/v1/agents?limit=1", { key: t.key })),
    );
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
    for (const res of responses) expect(res.headers.get("x-ratelimit-limit")).toBe("60");
  });

  it("limits messages per agent, not per account", async () => {
    const t = await h.tenant({ limits: { messagesPerMinute: 3 } });
    const ids: string[] = [];
    for (const name of ["a", "b"]) {
      ids.push(
        (await h.request<{ data: { id: string } }>("POST", "/v1/agents", { key: t.key, body: { name } })).body
          .data.id,
      );
    }
    const send = (id: string) =>
      h.request<ErrorBody>("POST", `/v1/agents/${id}/messages`, { key: t.key, body: { text: "hi" } });
    const first = [await send(ids[0]!), await send(ids[0]!), await send(ids[0]!), await send(ids[0]!)].map(
      (r) => r.status,
    );
    expect(first).toEqual([200, 200, 200, 429]);
    expect((await send(ids[1]!)).status).toBe(200);
  });

  it("refuses the 11th simultaneous message to one agent while ten run, and a stream holds its slot", async () => {
    const t = await h.tenant({ limits: { concurrentMessages: 10 } });
    const agentId = (
      await h.request<{ data: { id: string } }>("POST", "/v1/agents", { key: t.key, body: { name: "busy" } })
    ).body.data.id;
    openai.reset();
    // Long enough that the ten still run when the eleventh arrives, however busy the machine.
    for (let i = 0; i < 10; i++) openai.reply("slow", { delayMs: 3000 });
    // Ten conversations: one conversation's messages are answered one at a time.
    const running = Array.from({ length: 10 }, (_, i) =>
      h.request("POST", `/v1/agents/${agentId}/messages`, {
        key: t.key,
        body: { text: "hi", userId: `u${i}` },
      }),
    );
    await openai.waitForRequests(10);
    const eleventh = await h.request<ErrorBody>("POST", `/v1/agents/${agentId}/messages`, {
      key: t.key,
      body: { text: "hi" },
    });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(eleventh.body.error.message).toMatch(/10 simultaneous messages/);
    expect(Number(eleventh.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await Promise.all(running)).map((r) => r.status)).toEqual(Array(10).fill(200));

    // Slots are free again once those finished; a stream keeps its slot until it ends.
    const small = await h.tenant({ limits: { concurrentMessages: 1 } });
    const solo = (
      await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
        key: small.key,
        body: { name: "solo" },
      })
    ).body.data.id;
    openai.reply("one two three", { chunkDelayMs: 200 });
    const streaming = fetch(`${h.url}/v1/agents/${solo}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${small.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "hi", stream: true }),
    }).then((res) => res.text());
    await openai.waitForRequests(11);
    const blocked = await h.request("POST", `/v1/agents/${solo}/messages`, {
      key: small.key,
      body: { text: "hi" },
    });
    expect(blocked.status).toBe(429);
    expect(await streaming).toContain("message.completed");
    expect(
      (await h.request("POST", `/v1/agents/${solo}/messages`, { key: small.key, body: { text: "hi" } }))
        .status,
    ).toBe(200);
  });
});

describe("plan changes", () => {
  it("apply to running gateways without a restart", async () => {
    const { openRegistryStore } = await import("@agentry/registry");
    const t = await h.tenant({ limits: { requestsPerMinute: 100, listPerMinute: 1000 } });
    const before = await h.request("GET", "/v1/agents", { key: t.key });
    expect(before.headers.get("x-ratelimit-limit")).toBe("100");
    const store = await openRegistryStore({ dataDir: h.dataDir });
    try {
      await store.updateAccount(t.accountId, {
        limitOverrides: { requestsPerMinute: 200, listPerMinute: 1000 },
      });
    } finally {
      await store.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 800));
    const after = await h.request("GET", "/v1/agents", { key: t.key });
    expect(after.headers.get("x-ratelimit-limit")).toBe("200");
  });
});
