import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { ROUTES } from "@agentry/gateway";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant, type TestResponse } from "./harness.js";
import { addMember, signInAs } from "./members-helpers.js";

/*
 * The audit log (docs/api/audit.md) over the all-in-one server on SQLite: every mutating route the gateway
 * declares (ROUTES) either records exactly one event with its action, actor and target, or is one of the few
 * that change nothing of the account (sends, approvals, test deliveries).
 */

interface AuditEventJson {
  id: string;
  at: string;
  actor: { type: string; id: string | null };
  action: string;
  target: { type: string; id: string };
  ip: string | null;
  requestId: string | null;
  changes: Record<string, { from: unknown; to: unknown }> | null;
}
type Page = { data: AuditEventJson[]; pagination: { limit: number; hasMore: boolean } };

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;
beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    DEFAULT_MODEL_PROVIDER: "openai",
    ALLOW_PRIVATE_NETWORKS: "true",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await openai.close();
});

const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown, key = tenant.key) =>
  h.request<T & ErrorBody>(method, path, { key, ...(body !== undefined ? { body } : {}) }) as Promise<
    TestResponse<T & ErrorBody>
  >;

async function created(method: string, path: string, body?: unknown): Promise<string> {
  const res = await call<{ data: { id: string } }>(method, path, body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.data.id;
}

const newAgent = () => created("POST", "/v1/agents", { name: "Ada", bio: ["Counts things"] });

/** The account's events about one target, newest first. */
async function eventsOf(targetId: string, key = tenant.key): Promise<AuditEventJson[]> {
  const res = await call<Page>(
    "GET",
    `/v1/audit-events?targetId=${encodeURIComponent(targetId)}&limit=100`,
    undefined,
    key,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

/** What a mutating route is called with and what it records: its path's values and body, and the event's target. */
interface Case {
  prepare(): Promise<{ path: Record<string, string>; body?: unknown }>;
  /** The target's id, from the answer when it is made by the call. */
  target(path: Record<string, string>, answer: Record<string, unknown>): string;
  targetType: string;
  action: string;
}

const idOfAnswer = (_: Record<string, string>, answer: Record<string, unknown>) =>
  (answer.data as { id: string }).id;

const CASES: Record<string, Case> = {
  "POST /v1/agents": {
    prepare: async () => ({ path: {}, body: { name: "Made" } }),
    target: idOfAnswer,
    targetType: "agent",
    action: "agent.create",
  },
  "POST /v1/agents/import": {
    prepare: async () => ({ path: {}, body: { name: "Imported", bio: "Imported from a character file." } }),
    target: idOfAnswer,
    targetType: "agent",
    action: "agent.create",
  },
  "PATCH /v1/agents/:agentId": {
    prepare: async () => ({ path: { agentId: await newAgent() }, body: { name: "Renamed" } }),
    target: (path) => path.agentId!,
    targetType: "agent",
    action: "agent.update",
  },
  "DELETE /v1/agents/:agentId": {
    prepare: async () => ({ path: { agentId: await newAgent() } }),
    target: (path) => path.agentId!,
    targetType: "agent",
    action: "agent.delete",
  },
  "PUT /v1/agents/:agentId/secrets/:name": {
    prepare: async () => ({
      path: { agentId: await newAgent(), name: "MCP_TOKEN" },
      body: { value: "s3cr3t-value" },
    }),
    target: (path) => `${path.agentId}/MCP_TOKEN`,
    targetType: "secret",
    action: "secret.set",
  },
  "DELETE /v1/agents/:agentId/secrets/:name": {
    prepare: async () => {
      const agentId = await newAgent();
      await call("PUT", `/v1/agents/${agentId}/secrets/MCP_TOKEN`, { value: "s3cr3t-value" });
      return { path: { agentId, name: "MCP_TOKEN" } };
    },
    target: (path) => `${path.agentId}/MCP_TOKEN`,
    targetType: "secret",
    action: "secret.delete",
  },
  "POST /v1/api-keys": {
    prepare: async () => ({ path: {}, body: { name: "ci", scopes: ["agents:read"] } }),
    target: idOfAnswer,
    targetType: "key",
    action: "key.create",
  },
  "DELETE /v1/api-keys/:keyId": {
    prepare: async () => ({ path: { keyId: (await tenant.keyWith(["agents:read"])).keyId } }),
    target: (path) => path.keyId!,
    targetType: "key",
    action: "key.revoke",
  },
  "POST /v1/members": {
    prepare: async () => ({ path: {}, body: { email: `grace-${Date.now()}@example.com`, role: "viewer" } }),
    target: idOfAnswer,
    targetType: "member",
    action: "member.invite",
  },
  "PATCH /v1/members/:memberId": {
    prepare: async () => ({
      path: { memberId: await addMember(h, tenant.accountId, "viewer") },
      body: { role: "developer" },
    }),
    target: (path) => path.memberId!,
    targetType: "member",
    action: "member.update",
  },
  "DELETE /v1/members/:memberId": {
    prepare: async () => ({ path: { memberId: await addMember(h, tenant.accountId, "viewer") } }),
    target: (path) => path.memberId!,
    targetType: "member",
    action: "member.remove",
  },
  "POST /v1/budgets": {
    prepare: async () => ({ path: {}, body: { unit: "tokens", period: "day", limit: 100000 } }),
    target: idOfAnswer,
    targetType: "budget",
    action: "budget.create",
  },
  "PATCH /v1/budgets/:budgetId": {
    prepare: async () => ({
      path: {
        budgetId: await created("POST", "/v1/budgets", { unit: "tokens", period: "day", limit: 100000 }),
      },
      body: { limit: 200000 },
    }),
    target: (path) => path.budgetId!,
    targetType: "budget",
    action: "budget.update",
  },
  "DELETE /v1/budgets/:budgetId": {
    prepare: async () => ({
      path: { budgetId: await created("POST", "/v1/budgets", { unit: "usd", period: "month", limit: 10 }) },
    }),
    target: (path) => path.budgetId!,
    targetType: "budget",
    action: "budget.delete",
  },
  "POST /v1/webhooks": {
    prepare: async () => ({ path: {}, body: { url: "http://127.0.0.1:9/hook", events: ["*"] } }),
    target: idOfAnswer,
    targetType: "webhook",
    action: "webhook.create",
  },
  "PATCH /v1/webhooks/:webhookId": {
    prepare: async () => ({
      path: {
        webhookId: await created("POST", "/v1/webhooks", { url: "http://127.0.0.1:9/a", events: ["*"] }),
      },
      body: { description: "Changed" },
    }),
    target: (path) => path.webhookId!,
    targetType: "webhook",
    action: "webhook.update",
  },
  "DELETE /v1/webhooks/:webhookId": {
    prepare: async () => ({
      path: {
        webhookId: await created("POST", "/v1/webhooks", { url: "http://127.0.0.1:9/b", events: ["*"] }),
      },
    }),
    target: (path) => path.webhookId!,
    targetType: "webhook",
    action: "webhook.delete",
  },
  "POST /v1/webhooks/:webhookId/rotate-secret": {
    prepare: async () => ({
      path: {
        webhookId: await created("POST", "/v1/webhooks", { url: "http://127.0.0.1:9/c", events: ["*"] }),
      },
      body: {},
    }),
    target: (path) => path.webhookId!,
    targetType: "webhook",
    action: "webhook.rotate_secret",
  },
  "POST /v1/agents/:agentId/schedules": {
    prepare: async () => ({
      path: { agentId: await newAgent() },
      body: { cron: "0 9 * * 1-5", text: "Report", timezone: "UTC" },
    }),
    target: idOfAnswer,
    targetType: "schedule",
    action: "schedule.create",
  },
  "PATCH /v1/agents/:agentId/schedules/:scheduleId": {
    prepare: async () => {
      const agentId = await newAgent();
      const scheduleId = await created("POST", `/v1/agents/${agentId}/schedules`, {
        cron: "0 9 * * *",
        text: "Hi",
        timezone: "UTC",
      });
      return { path: { agentId, scheduleId }, body: { enabled: false } };
    },
    target: (path) => path.scheduleId!,
    targetType: "schedule",
    action: "schedule.update",
  },
  "DELETE /v1/agents/:agentId/schedules/:scheduleId": {
    prepare: async () => {
      const agentId = await newAgent();
      const scheduleId = await created("POST", `/v1/agents/${agentId}/schedules`, {
        cron: "0 9 * * *",
        text: "Hi",
        timezone: "UTC",
      });
      return { path: { agentId, scheduleId } };
    },
    target: (path) => path.scheduleId!,
    targetType: "schedule",
    action: "schedule.delete",
  },
  "POST /v1/agents/:agentId/documents": {
    prepare: async () => ({
      path: { agentId: await newAgent() },
      body: { title: "Tides", contentType: "text/markdown", text: "# Tides\nHigh water at noon." },
    }),
    target: idOfAnswer,
    targetType: "document",
    action: "document.create",
  },
  "DELETE /v1/agents/:agentId/documents/:documentId": {
    prepare: async () => {
      const agentId = await newAgent();
      const documentId = await created("POST", `/v1/agents/${agentId}/documents`, {
        title: "Tides",
        contentType: "text/plain",
        text: "High water at noon.",
      });
      return { path: { agentId, documentId } };
    },
    target: (path) => path.documentId!,
    targetType: "document",
    action: "document.delete",
  },
  "POST /v1/agents/:agentId/memories": {
    prepare: async () => ({
      path: { agentId: await newAgent() },
      body: { userId: "u1", text: "Likes teal." },
    }),
    target: idOfAnswer,
    targetType: "memory",
    action: "memory.create",
  },
  "DELETE /v1/agents/:agentId/memories/:memoryId": {
    prepare: async () => {
      const agentId = await newAgent();
      const memoryId = await created("POST", `/v1/agents/${agentId}/memories`, {
        userId: "u1",
        text: "Likes teal.",
      });
      return { path: { agentId, memoryId } };
    },
    target: (path) => path.memoryId!,
    targetType: "memory",
    action: "memory.delete",
  },
  "DELETE /v1/agents/:agentId/conversations/:conversationId": {
    prepare: async () => {
      const agentId = await newAgent();
      await created("POST", `/v1/agents/${agentId}/messages`, { text: "Hello", userId: "u9" });
      const list = await call<{ data: { id: string }[] }>("GET", `/v1/agents/${agentId}/conversations`);
      return { path: { agentId, conversationId: list.body.data[0]!.id } };
    },
    target: (path) => path.conversationId!,
    targetType: "conversation",
    action: "conversation.delete",
  },
  "DELETE /v1/users/:userId": {
    prepare: async () => ({ path: { userId: `erased-${Date.now()}` } }),
    target: (path) => path.userId!,
    targetType: "user",
    action: "user.erase",
  },
  "POST /v1/agents/:agentId/runs/cancel": {
    prepare: async () => ({ path: { agentId: await newAgent() }, body: {} }),
    target: (path) => path.agentId!,
    targetType: "agent",
    action: "run.cancel",
  },
};

/** Routes that change nothing of the account's configuration or data on the record: they are not audited. */
const NOT_CHANGES = new Set([
  "POST /v1/agents/:agentId/messages",
  "POST /v1/agents/:agentId/messages/:messageId/approve",
  "POST /v1/webhooks/:webhookId/test",
  "POST /v1/webhooks/:webhookId/deliveries/:deliveryId/redeliver",
]);

const mutating = ROUTES.filter((route) => route.method !== "GET").map(
  (route) => `${route.method} ${route.path}`,
);

describe("audit events for every mutating route", () => {
  it("covers every mutating route the gateway declares", () => {
    expect(mutating.length).toBeGreaterThan(25);
    for (const route of mutating) expect(route in CASES || NOT_CHANGES.has(route), route).toBe(true);
  });

  it.each(mutating.filter((route) => route in CASES))("%s records one event", async (route) => {
    const test = CASES[route]!;
    const [method, template] = route.split(" ") as [string, string];
    const { path, body } = await test.prepare();
    const url = template.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(path[name]!));
    const res = await call(method, url, body);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    const target = test.target(path, res.body);
    const events = (await eventsOf(target)).filter((event) => event.action === test.action);
    expect(events, JSON.stringify(events)).toHaveLength(1);
    const event = events[0]!;
    expect(event).toMatchObject({
      id: expect.stringMatching(/^aud_[0-9A-HJKMNP-TV-Z]{26}$/),
      actor: { type: "key", id: tenant.keyId },
      target: { type: test.targetType, id: target },
      requestId: res.headers.get("x-request-id"),
    });
    expect(event.ip).toMatch(/127\.0\.0\.1/);
    expect(Date.parse(event.at)).toBeGreaterThan(Date.now() - 60_000);
    // No secret reaches the log: the value set, a new key's secret, a webhook's signing secret.
    const text = JSON.stringify(event);
    expect(text).not.toContain("s3cr3t-value");
    for (const secret of secretsIn(res.body)) expect(text).not.toContain(secret);
  });
});

/** Every string of an answer named like a secret. */
function secretsIn(value: unknown): string[] {
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([name, inner]) =>
    typeof inner === "string" && /secret|key$/i.test(name) && inner.length > 12 ? [inner] : secretsIn(inner),
  );
}

describe("what an event says", () => {
  it("records an update's changed fields, and a console member as the actor", async () => {
    const memberId = await addMember(h, tenant.accountId, "admin");
    const session = await signInAs(h, tenant.accountId, memberId);
    const agentId = await newAgent();
    const res = await session.request("PATCH", `/v1/agents/${agentId}`, { name: "Grace", goals: ["Help"] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [event] = (await eventsOf(agentId)).filter((e) => e.action === "agent.update");
    expect(event!.actor).toEqual({ type: "member", id: memberId });
    expect(event!.changes).toEqual({ name: { from: "Ada", to: "Grace" }, goals: { from: [], to: ["Help"] } });
    // The admin reads the log (audit:read); a developer may not.
    expect((await session.request("GET", "/v1/audit-events")).status).toBe(200);
    const developer = await signInAs(h, tenant.accountId, await addMember(h, tenant.accountId, "developer"));
    const refused = await developer.request<ErrorBody>("GET", "/v1/audit-events");
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("audit:read");
  });

  it("marks write-only secrets as redacted", async () => {
    const agentId = await newAgent();
    await call("PATCH", `/v1/agents/${agentId}`, { settings: { secrets: { TOKEN: "hidden-value-123" } } });
    const [event] = (await eventsOf(agentId)).filter((e) => e.action === "agent.update");
    expect(JSON.stringify(event)).not.toContain("hidden-value-123");
    expect(event!.changes!.settings!.to).toEqual({ secrets: "[redacted]" });
  });

  it("records nothing for a change that fails", async () => {
    const agentId = await newAgent();
    const before = await eventsOf(agentId);
    const stale = await h.request("PATCH", `/v1/agents/${agentId}`, {
      key: tenant.key,
      body: { name: "Late" },
      headers: { "if-match": '"stale-version"' },
    });
    expect(stale.status).toBe(412);
    expect(await eventsOf(agentId)).toEqual(before);
  });
});

describe("GET /v1/audit-events", () => {
  it("pages across services by cursor, in both orders, and filters", async () => {
    const other = await h.tenant();
    const as = (method: string, path: string, body?: unknown) => call(method, path, body, other.key);
    const agent = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
      key: other.key,
      body: { name: "P" },
    });
    const agentId = agent.body.data.id;
    await as("POST", `/v1/agents/${agentId}/schedules`, { cron: "0 9 * * *", text: "Hi", timezone: "UTC" }); // conversation
    await as("POST", "/v1/webhooks", { url: "http://127.0.0.1:9/p", events: ["*"] }); // webhooks
    await as("PATCH", `/v1/agents/${agentId}`, { name: "Q" }); // registry
    await as("POST", `/v1/agents/${agentId}/memories`, { userId: "u", text: "Likes tea." }); // conversation

    const all = await call<Page>("GET", "/v1/audit-events?limit=100", undefined, other.key);
    const actions = all.body.data.map((event) => event.action);
    expect(actions).toEqual([
      "memory.create",
      "agent.update",
      "webhook.create",
      "schedule.create",
      "agent.create",
    ]);
    const ids = all.body.data.map((event) => event.id);
    expect([...ids].sort().reverse()).toEqual(ids);

    // Two at a time, newest first, then back up with `after`.
    const first = await call<Page>("GET", "/v1/audit-events?limit=2", undefined, other.key);
    expect(first.body.data.map((e) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.body.pagination).toEqual({ limit: 2, hasMore: true });
    const second = await call<Page>("GET", `/v1/audit-events?limit=2&before=${ids[1]}`, undefined, other.key);
    expect(second.body.data.map((e) => e.id)).toEqual(ids.slice(2, 4));
    const last = await call<Page>("GET", `/v1/audit-events?limit=2&before=${ids[3]}`, undefined, other.key);
    expect(last.body.data.map((e) => e.id)).toEqual(ids.slice(4));
    expect(last.body.pagination.hasMore).toBe(false);
    const back = await call<Page>("GET", `/v1/audit-events?limit=2&after=${ids[4]}`, undefined, other.key);
    expect(back.body.data.map((e) => e.id)).toEqual(ids.slice(2, 4));
    const ascending = await call<Page>("GET", "/v1/audit-events?limit=3&order=asc", undefined, other.key);
    expect(ascending.body.data.map((e) => e.id)).toEqual([...ids].reverse().slice(0, 3));

    const filtered = async (query: string) =>
      (await call<Page>("GET", `/v1/audit-events?${query}`, undefined, other.key)).body.data.map(
        (e) => e.action,
      );
    expect(await filtered("targetType=agent")).toEqual(["agent.update", "agent.create"]);
    expect(await filtered("action=schedule.create")).toEqual(["schedule.create"]);
    expect(await filtered(`actorType=key&actorId=${other.keyId}`)).toHaveLength(5);
    expect(await filtered("actorType=member")).toEqual([]);
    const at = all.body.data[2]!.at;
    expect(
      await filtered(`since=${encodeURIComponent("2000-01-01T00:00:00Z")}&until=${encodeURIComponent(at)}`),
    ).toEqual(all.body.data.filter((e) => e.at < at).map((e) => e.action));
    // Another account sees none of them.
    expect((await eventsOf(agentId)).length).toBe(0);
  });

  it("refuses bad filters with 400 naming them", async () => {
    for (const [query, field] of [
      ["actorType=robot", "actorType"],
      ["since=yesterday", "since"],
      ["action=Agent", "action"],
      ["before=aud_nope", "before"],
      ["since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", "until"],
      ["targetId=agt_%00", "targetId"],
    ] as const) {
      const res = await call("GET", `/v1/audit-events?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.details?.map((d) => d.field)).toContain(field);
    }
  });
});

describe("GET /v1/audit-events/export", () => {
  it("streams every matching event as NDJSON, oldest first, across pages", async () => {
    const other = await h.tenant();
    const made: string[] = [];
    for (let i = 0; i < 105; i += 1) {
      const res = await h.request<{ data: { id: string } }>("POST", "/v1/budgets", {
        key: other.key,
        body: { unit: "tokens", period: "day", limit: 1000 + i },
      });
      if (res.status !== 201) break;
      made.push(res.body.data.id);
    }
    const res = await fetch(`${h.url}/v1/audit-events/export?action=budget.create`, {
      headers: { authorization: `Bearer ${other.key}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = (await res.text()).split("\n");
    expect(lines.pop()).toBe("");
    const events = lines.map((line) => JSON.parse(line) as AuditEventJson);
    expect(events.map((e) => e.target.id)).toEqual(made);
    expect(events.every((e) => e.action === "budget.create")).toBe(true);

    const none = await fetch(`${h.url}/v1/audit-events/export?action=agent.delete`, {
      headers: { authorization: `Bearer ${other.key}` },
    });
    expect(none.status).toBe(200);
    expect(await none.text()).toBe("");
  });
});
