import { createHash, createHmac, hkdfSync } from "node:crypto";
import { join } from "node:path";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";
import { parseEventStream } from "./sse.js";

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;
let seq = 0;

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
beforeEach(() => {
  openai.reset();
});

/** A key no other test uses. */
const newKey = () => `key-${process.pid}-${++seq}-${Math.random()}`;

const post = <T = Record<string, unknown>>(path: string, body: unknown, key: string, who = tenant.key) =>
  h.request<T>("POST", path, { key: who, body, headers: { "Idempotency-Key": key } });

async function agentCount(): Promise<number> {
  const res = await h.request<{ pagination: { total: number } }>("GET", "/v1/agents?limit=1", {
    key: tenant.key,
  });
  return res.body.pagination.total;
}

describe("Idempotency-Key on creates", () => {
  it("creates once and answers the same request again with the first response, marked replayed", async () => {
    const key = newKey();
    const before = await agentCount();
    const first = await post<{ data: { id: string } }>("/v1/agents", { name: "Once" }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    for (let i = 0; i < 3; i++) {
      const again = await post("/v1/agents", { name: "Once" }, key);
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
    }
    expect(await agentCount()).toBe(before + 1);
  });

  it("refuses the key with another body, path or method with 422 IDEMPOTENCY_KEY_REUSED", async () => {
    const key = newKey();
    await post("/v1/agents", { name: "First" }, key);
    for (const [method, path, body] of [
      ["POST", "/v1/agents", { name: "Second" }],
      ["POST", "/v1/agents/import?dryRun=true", { name: "First" }],
      ["PATCH", "/v1/agents/agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1", { name: "First" }],
    ] as const) {
      const res = await h.request<ErrorBody>(method, path, {
        key: tenant.key,
        body,
        headers: { "Idempotency-Key": key },
      });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    }
  });

  it("keeps keys per account: another account's same key is a new request", async () => {
    const other = await h.tenant();
    const key = newKey();
    const mine = await post<{ data: { id: string } }>("/v1/agents", { name: "Mine" }, key);
    const theirs = await post<{ data: { id: string } }>("/v1/agents", { name: "Theirs" }, key, other.key);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it("gives simultaneous duplicates one create: the others are 409 IDEMPOTENCY_KEY_IN_USE or a replay", async () => {
    const key = newKey();
    const before = await agentCount();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post<ErrorBody>("/v1/agents", { name: "Racer" }, key)),
    );
    const created = answers.filter((a) => a.status === 201 && a.headers.get("idempotent-replayed") === null);
    expect(created).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 409) {
        expect(answer.body.error.code).toBe("IDEMPOTENCY_KEY_IN_USE");
        expect(answer.headers.get("retry-after")).toBe("1");
      } else {
        expect(answer.status).toBe(201);
      }
    }
    expect(await agentCount()).toBe(before + 1);
  });

  it("replays a refusal the request earned", async () => {
    const full = await h.tenant({ maxAgents: 1 });
    await h.request("POST", "/v1/agents", { key: full.key, body: { name: "The only one" } });
    const key = newKey();
    const refused = await post<ErrorBody>("/v1/agents", { name: "No room" }, key, full.key);
    expect(refused.status).toBe(403);
    const again = await post<ErrorBody>("/v1/agents", { name: "No room" }, key, full.key);
    expect(again.status).toBe(403);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(refused.body);
  });

  it("replays a refusal of the body, and refuses the key to a valid body after it", async () => {
    const key = newKey();
    const refused = await post<ErrorBody>("/v1/agents", { name: "" }, key);
    expect(refused.status).toBe(400);
    const again = await post<ErrorBody>("/v1/agents", { name: "" }, key);
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(refused.body);
    const before = await agentCount();
    const other = await post<ErrorBody>("/v1/agents", { name: "Valid" }, key);
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(await agentCount()).toBe(before);
  });

  it("refuses a malformed key with 400 naming the header, and ignores the header on reads", async () => {
    for (const bad of ["", "a".repeat(256), "naïve", "tab\there"]) {
      const res = await h.request<ErrorBody>("POST", "/v1/agents", {
        key: tenant.key,
        rawBody: JSON.stringify({ name: "x" }),
        headers: { "content-type": "application/json", "Idempotency-Key": bad },
      });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.details).toEqual([
        { field: "Idempotency-Key", issue: "must be 1 to 255 printable ASCII characters" },
      ]);
    }
    const read = await h.request("GET", "/v1/agents", {
      key: tenant.key,
      headers: { "Idempotency-Key": "" },
    });
    expect(read.status).toBe(200);
  });

  it("keeps a new API key's secret only sealed with the Idempotency-Key, and replays it whole", async () => {
    const key = newKey();
    const first = await post<{ data: { key: string } }>("/v1/api-keys", { name: "replayed" }, key);
    expect(first.status).toBe(201);
    const again = await post<{ data: { key: string } }>("/v1/api-keys", { name: "replayed" }, key);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const db = new Database(join(h.dataDir, "registry.db"), { readonly: true });
    try {
      const rows = db
        .prepare<[string], { key_hash: string; secret: Buffer }>(
          "SELECT key_hash, secret FROM idempotency_keys WHERE account_id = ?",
        )
        .all(tenant.accountId);
      const row = rows.find((r) => r.key_hash === createHash("sha256").update(key).digest("hex"));
      expect(row).toBeDefined();
      const stored = row!.secret.toString("latin1");
      expect(stored).not.toContain(first.body.data.key);
      expect(stored).not.toContain("replayed");
      expect(rows.some((r) => r.key_hash === key)).toBe(false);
    } finally {
      db.close();
    }
  });
});

describe("Idempotency-Key when the gateway stops mid-create", () => {
  /** A POST under a new key as the gateway sees it: its key's SHA-256 and fingerprint, and a way to send it. */
  function keyedRequest(path: string, body: unknown) {
    const key = newKey();
    const raw = JSON.stringify(body);
    return {
      key,
      keyHash: createHash("sha256").update(key).digest("hex"),
      fingerprint: createHmac("sha256", key).update(`POST ${path}\n${raw}`).digest("hex"),
      /** Sends it through the gateway, byte for byte the same each time. */
      send: <T = Record<string, unknown>>() =>
        h.request<T>("POST", path, {
          key: tenant.key,
          rawBody: raw,
          headers: { "content-type": "application/json", "Idempotency-Key": key },
        }),
    };
  }

  it("answers the retry with the agent as it was created, even once changed, keeping none of it with the key", async () => {
    // What a gateway that died after the create committed leaves: the agent and its key's record, stored in
    // one transaction, and no response sent.
    const { keyHash, fingerprint, send } = keyedRequest("/v1/agents", {
      name: "Original",
      bio: ["Made once."],
    });
    const first = await h.gateway.context.agents.createAgent({
      accountId: tenant.accountId,
      spec: { name: "Original", bio: ["Made once."] },
      idempotency: { keyHash, fingerprint },
    });
    const id = first.agent!.id;
    const asCreated = await h.request<{ data: Record<string, unknown> }>("GET", `/v1/agents/${id}`, {
      key: tenant.key,
    });
    await h.request("PATCH", `/v1/agents/${id}`, { key: tenant.key, body: { name: "Changed since" } });
    const before = await agentCount();

    const retry = await send<{ data: Record<string, unknown> }>();
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.data).toEqual(asCreated.body.data);
    expect(await agentCount()).toBe(before);

    // Deleted since: the retry still answers the agent it made, and makes none.
    await h.request("DELETE", `/v1/agents/${id}`, { key: tenant.key });
    const afterDelete = await send<{ data: Record<string, unknown> }>();
    expect(afterDelete.status).toBe(201);
    expect(afterDelete.body.data).toEqual(asCreated.body.data);
    expect(await agentCount()).toBe(before - 1);

    const db = new Database(join(h.dataDir, "registry.db"), { readonly: true });
    try {
      const row = db
        .prepare<[string, string], Record<string, unknown>>(
          "SELECT * FROM idempotency_keys WHERE account_id = ? AND key_hash = ?",
        )
        .get(tenant.accountId, keyHash);
      expect(row).toMatchObject({ status: 201, resource_id: id, sealed: null });
      expect(new Date(row!.created_at as number).toISOString()).toBe(asCreated.body.data.createdAt);
      expect(JSON.stringify(row)).not.toContain("Original");
    } finally {
      db.close();
    }
  });

  it("keeps the answer itself when the registry is of a release that creates without claiming the key", async () => {
    const { agents } = h.gateway.context;
    const createAgent = agents.createAgent;
    // Such a registry ignores `idempotency` and leaves `keyClaimed` unset.
    (agents as { createAgent: typeof createAgent }).createAgent = (request, options) =>
      createAgent({ ...request, idempotency: undefined }, options);
    try {
      const key = newKey();
      const first = await post<{ data: { id: string } }>("/v1/agents", { name: "Mixed releases" }, key);
      expect(first.status).toBe(201);
      // The answer was kept under the key after the create: the retry is told the first agent. (That registry
      // still makes another one, which is why the deploy guide upgrades the registry first.)
      const again = await post<{ data: { id: string } }>("/v1/agents", { name: "Mixed releases" }, key);
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      const other = await post<ErrorBody>("/v1/agents", { name: "Another request" }, key);
      expect(other.status).toBe(422);
    } finally {
      (agents as { createAgent: typeof createAgent }).createAgent = createAgent;
    }
  });

  it("answers a retry refused before its create as refused, when the key's create made its agent", async () => {
    // The key's create ran with this body; the deployment has changed since, and the gateway now refuses it.
    const { keyHash, fingerprint, send } = keyedRequest("/v1/agents", { name: "" });
    await h.gateway.context.agents.createAgent({
      accountId: tenant.accountId,
      spec: { name: "Made then" },
      idempotency: { keyHash, fingerprint },
    });
    const before = await agentCount();
    const retry = await send<ErrorBody>();
    expect(retry.status).toBe(400);
    expect(retry.body.error.code).toBe("INVALID_REQUEST");
    expect(await agentCount()).toBe(before);
  });

  it("answers the retry of an API key create whose gateway stopped after the commit with the same key and secret", async () => {
    const { key, keyHash, fingerprint, send } = keyedRequest("/v1/api-keys", { name: "survives" });
    const sealingKey = Buffer.from(
      hkdfSync("sha256", key, tenant.accountId, "agentry idempotent response", 32),
    );
    const first = await h.gateway.context.accounts.createApiKey({
      accountId: tenant.accountId,
      name: "survives",
      scopes: [],
      idempotency: { keyHash, fingerprint, sealingKey },
    });
    const count = async () =>
      (await h.request<{ data: unknown[] }>("GET", "/v1/api-keys", { key: tenant.key })).body.data.length;
    const before = await count();
    const retry = await send<{ data: { id: string; key: string } }>();
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.data).toMatchObject({ id: first.apiKey!.id, key: first.secret });
    expect(await count()).toBe(before);
    // The secret it answers works.
    expect((await h.request("GET", "/v1/agents?limit=1", { key: retry.body.data.key })).status).toBe(200);
  });

  it("answers the retry of a webhook endpoint create whose gateway stopped after it with that endpoint", async () => {
    // What a gateway that died after the endpoint was made leaves: its claim on the key, which runs out, and the
    // endpoint, which keeps the key's SHA-256.
    const { keyHash, fingerprint, send } = keyedRequest("/v1/webhooks", {
      url: "http://127.0.0.1:9/hook",
      events: ["agent.created"],
    });
    await h.gateway.context.idempotency.beginRequest({
      accountId: tenant.accountId,
      keyHash,
      fingerprint,
      leaseMs: 1n,
    });
    const first = await h.gateway.context.webhooks.createWebhook({
      accountId: tenant.accountId,
      spec: { url: "http://127.0.0.1:9/hook", events: ["agent.created"] },
      idempotencyKeyHash: keyHash,
    });
    const count = async () =>
      (await h.request<{ data: unknown[] }>("GET", "/v1/webhooks", { key: tenant.key })).body.data.length;
    const before = await count();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const retry = await send<{ data: { id: string; secret: string } }>();
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.data).toMatchObject({ id: first.webhook!.id, secret: first.secret });
    expect(await count()).toBe(before);
    // Kept under the key now: the same request again is the same answer.
    const again = await send();
    expect(again.body).toEqual(retry.body);
  });

  it("answers a create kept by the earlier two-step form with the agent it made", async () => {
    // What a gateway of an earlier release that died after the create committed leaves: the key claimed, then
    // completed with the agent's id in the create's transaction, and no response kept.
    const { keyHash, fingerprint, send } = keyedRequest("/v1/agents", { name: "Survivor" });
    const { idempotency, agents } = h.gateway.context;
    await idempotency.beginRequest({ accountId: tenant.accountId, keyHash, fingerprint, leaseMs: 60_000n });
    const { agent } = await agents.createAgent({
      accountId: tenant.accountId,
      spec: { name: "Survivor" },
      idempotencyKeyHash: keyHash,
    });
    const before = await agentCount();

    const retry = await send<{ data: { id: string; name: string } }>();
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.data).toMatchObject({ id: agent!.id, name: "Survivor" });
    expect(await agentCount()).toBe(before);
  });

  it("runs the create again when the gateway stopped before it (the claim's lease ran out)", async () => {
    const { keyHash, fingerprint, send } = keyedRequest("/v1/agents", { name: "Second chance" });
    await h.gateway.context.idempotency.beginRequest({
      accountId: tenant.accountId,
      keyHash,
      fingerprint,
      leaseMs: 1n,
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const retry = await send();
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("Idempotency-Key on updates and deletes", () => {
  it("replays a PATCH and a DELETE instead of running them again", async () => {
    const created = await post<{ data: { id: string } }>("/v1/agents", { name: "Target" }, newKey());
    const id = created.body.data.id;
    const key = newKey();
    const patch = () =>
      h.request("PATCH", `/v1/agents/${id}`, {
        key: tenant.key,
        body: { name: "Renamed" },
        headers: { "Idempotency-Key": key },
      });
    const first = await patch();
    // A change in between: the replay answers what the first request answered, not the agent as it is now.
    await h.request("PATCH", `/v1/agents/${id}`, { key: tenant.key, body: { name: "Changed since" } });
    const replayed = await patch();
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body).toEqual(first.body);

    const deleteKey = newKey();
    const del = () =>
      h.request("DELETE", `/v1/agents/${id}`, { key: tenant.key, headers: { "Idempotency-Key": deleteKey } });
    const deleted = await del();
    expect(deleted.status).toBe(200);
    const again = await del();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(deleted.body);
  });
});

describe("Idempotency-Key on messages", () => {
  async function newAgent(): Promise<string> {
    const res = await post<{ data: { id: string } }>(
      "/v1/agents",
      { name: "Talker", modelProvider: "openai", model: "gpt-4o-mini" },
      newKey(),
    );
    return res.body.data.id;
  }

  it("sends a message once: the retry answers the stored reply without calling the model", async () => {
    const agentId = await newAgent();
    const key = newKey();
    openai.reply("Only once.");
    const first = await post<{ data: { id: string; text: string } }>(
      `/v1/agents/${agentId}/messages`,
      { text: "hello", userId: "u" },
      key,
    );
    expect(first.status).toBe(200);
    const calls = openai.requests.length;
    const again = await post(`/v1/agents/${agentId}/messages`, { text: "hello", userId: "u" }, key);
    expect(again.body).toEqual(first.body);
    expect(openai.requests.length).toBe(calls);
    const history = await h.request<{ data: unknown[] }>("GET", `/v1/agents/${agentId}/messages?userId=u`, {
      key: tenant.key,
    });
    expect(history.body.data).toHaveLength(2);
  });

  it("lets a message that failed with a retryable error run again under its key", async () => {
    const agentId = await newAgent();
    const key = newKey();
    openai.failWith(503);
    const failed = await post<ErrorBody>(`/v1/agents/${agentId}/messages`, { text: "hi" }, key);
    expect(failed.status).toBe(503);
    openai.reply("Now it works.");
    const retried = await post<{ data: { text: string } }>(
      `/v1/agents/${agentId}/messages`,
      { text: "hi" },
      key,
    );
    expect(retried.status).toBe(200);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect(retried.body.data.text).toBe("Now it works.");
  });

  it("replays a completed stream's events exactly", async () => {
    const agentId = await newAgent();
    const key = newKey();
    openai.reply("one two three", { chunkDelayMs: 2 });
    const stream = async () => {
      const res = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tenant.key}`,
          "content-type": "application/json",
          "Idempotency-Key": key,
        },
        body: JSON.stringify({ text: "count", stream: true }),
      });
      return { res, text: await res.text() };
    };
    const first = await stream();
    const calls = openai.requests.length;
    const again = await stream();
    expect(again.res.headers.get("idempotent-replayed")).toBe("true");
    expect(again.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(parseEventStream(again.text).events).toEqual(parseEventStream(first.text).events);
    expect(parseEventStream(first.text).events.at(-1)?.event).toBe("message.completed");
    expect(openai.requests.length).toBe(calls);
  });
});

describe("Idempotency-Key when the gateway stops mid-send", () => {
  async function newAgent(): Promise<string> {
    const res = await post<{ data: { id: string } }>(
      "/v1/agents",
      { name: "Survivor", modelProvider: "openai", model: "gpt-4o-mini" },
      newKey(),
    );
    return res.body.data.id;
  }

  /**
   * What a gateway that stopped after the reply was stored, before it kept the response, leaves in the registry:
   * the key claimed with the request's fingerprint, no response, and a lease that has run out.
   */
  function forgetResponse(key: string): void {
    const db = new Database(join(h.dataDir, "registry.db"));
    try {
      const changed = db
        .prepare<[number, string, string]>(
          `UPDATE idempotency_keys SET status = NULL, sealed = NULL, resource_id = NULL, lease_until = ?
           WHERE account_id = ? AND key_hash = ?`,
        )
        .run(Date.now() - 1000, tenant.accountId, createHash("sha256").update(key).digest("hex")).changes;
      expect(changed).toBe(1);
    } finally {
      db.close();
    }
  }

  async function messages(agentId: string): Promise<{ id: string }[]> {
    const res = await h.request<{ data: { id: string }[] }>(
      "GET",
      `/v1/agents/${agentId}/messages?limit=100`,
      {
        key: tenant.key,
      },
    );
    return res.body.data;
  }

  it("answers the retry of a message with the reply already generated, calling the model once", async () => {
    const agentId = await newAgent();
    const key = newKey();
    openai.reply("Generated once.");
    const first = await post<{ data: { id: string; text: string } }>(
      `/v1/agents/${agentId}/messages`,
      { text: "hello", userId: "u" },
      key,
    );
    expect(first.status).toBe(200);
    forgetResponse(key);
    const retry = await post(`/v1/agents/${agentId}/messages`, { text: "hello", userId: "u" }, key);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    expect(openai.requests).toHaveLength(1);
    expect(await messages(agentId)).toHaveLength(2);
    // The retry's response is kept now: the next one is a replay.
    const replayed = await post(`/v1/agents/${agentId}/messages`, { text: "hello", userId: "u" }, key);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body).toEqual(first.body);
  });

  it("re-sends a streamed reply's events to the retry, calling the model once", async () => {
    const agentId = await newAgent();
    const key = newKey();
    openai.reply("one two three", { chunkDelayMs: 2 });
    const stream = async () => {
      const res = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tenant.key}`,
          "content-type": "application/json",
          "Idempotency-Key": key,
        },
        body: JSON.stringify({ text: "count", stream: true }),
      });
      return parseEventStream(await res.text()).events;
    };
    const first = await stream();
    expect(first.at(-1)?.event).toBe("message.completed");
    forgetResponse(key);
    const retry = await stream();
    expect(retry).toEqual(first);
    expect(openai.requests).toHaveLength(1);
    expect(await messages(agentId)).toHaveLength(2);
  });

  it("answers the retry of a background message with the first one's id", async () => {
    const agentId = await newAgent();
    const key = newKey();
    openai.reply("Worked on once.", { delayMs: 100 });
    const start = () =>
      post<{ data: { id: string; status: string } }>(
        `/v1/agents/${agentId}/messages`,
        { text: "work", background: true },
        key,
      );
    const first = await start();
    expect(first.status).toBe(202);
    forgetResponse(key);
    // While it is generated, and after.
    const during = await start();
    expect(during.status).toBe(202);
    expect(during.body.data.id).toBe(first.body.data.id);
    for (;;) {
      const state = await h.request<{ data: { status: string } }>(
        "GET",
        `/v1/agents/${agentId}/messages/${first.body.data.id}`,
        { key: tenant.key },
      );
      if (state.body.data.status !== "pending") break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    forgetResponse(key);
    const after = await start();
    expect(after.body.data.id).toBe(first.body.data.id);
    expect(openai.requests).toHaveLength(1);
    expect(await messages(agentId)).toHaveLength(2);
  });
});
