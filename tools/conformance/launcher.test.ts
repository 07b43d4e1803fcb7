import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Launcher, startLauncher } from "./launcher.js";

let launcher: Launcher;

beforeAll(async () => {
  launcher = await startLauncher();
});
afterAll(async () => {
  await launcher?.close();
});

const get = (path: string, key: string) =>
  fetch(`${launcher.info.baseURL}${path}`, { headers: { authorization: `Bearer ${key}` } });

const control = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${launcher.info.controlURL}${path}`, {
    method,
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } }
      : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const create = (body: unknown, idempotencyKey: string) =>
  fetch(`${launcher.info.baseURL}/agents`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${launcher.info.keys.retry}`,
      "content-type": "application/json",
      "idempotency-key": idempotencyKey,
    },
    body: JSON.stringify(body),
  });

describe("the conformance launcher", () => {
  it("describes the service, its keys and the scenario", () => {
    const { info } = launcher;
    expect(info.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(info.controlURL).toBe(info.baseURL.replace(/\/v1$/, "/_conformance"));
    expect(info.webhookURL).toBe(`${info.controlURL}/webhooks/sink`);
    expect(Object.keys(info.keys).sort()).toEqual([
      "full",
      "limited",
      "pager",
      "quota",
      "readOnly",
      "retry",
      "revoked",
    ]);
    for (const key of Object.values(info.keys)) expect(key).toMatch(/^agentry_sk_[0-9A-Za-z]{38}$/);
    const scenario = JSON.parse(readFileSync(info.scenario, "utf8")) as { version: number };
    expect(scenario.version).toBe(1);
  });

  it("seeds keys with the scopes and limits the scenario relies on", async () => {
    const { keys } = launcher.info;
    expect((await get("/agents", keys.full)).status).toBe(200);
    expect((await get("/agents", keys.readOnly)).status).toBe(200);
    expect((await get("/api-keys", keys.readOnly)).status).toBe(403);
    expect((await get("/agents", keys.revoked)).status).toBe(401);
    const limited = await get("/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA", keys.limited);
    expect(limited.headers.get("x-ratelimit-limit")).toBe("2");
  });

  it("counts the requests each key made", async () => {
    const before = (await control("GET", "/requests")).body as {
      total: number;
      byKey: Record<string, number>;
    };
    await get("/agents", launcher.info.keys.pager);
    await get("/agents", launcher.info.keys.pager);
    await get("/agents", "agentry_sk_unknown");
    const after = (await control("GET", "/requests")).body as {
      total: number;
      byKey: Record<string, number>;
    };
    expect((after.byKey.pager ?? 0) - (before.byKey.pager ?? 0)).toBe(2);
    expect((after.byKey.other ?? 0) - (before.byKey.other ?? 0)).toBe(1);
    expect(after.total - before.total).toBe(3);
  });

  it("logs each request with its Idempotency-Key, how often that key came, and its outcome", async () => {
    const { total } = (await control("GET", "/requests")).body as { total: number };
    const key = "launcher-log-1";
    expect((await create({ name: "logged" }, key)).status).toBe(201);
    const again = await create({ name: "logged" }, key);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await get("/agents", launcher.info.keys.retry)).status).toBe(200);
    const { body } = await control("GET", `/requests?after=${total}`);
    expect(body.log).toEqual([
      {
        seq: total + 1,
        key: "retry",
        method: "POST",
        path: "/v1/agents",
        idempotencyKey: key,
        idempotencyKeyUse: 1,
        status: 201,
        replayed: false,
        dropped: false,
      },
      expect.objectContaining({ seq: total + 2, idempotencyKeyUse: 2, status: 201, replayed: true }),
      expect.objectContaining({
        seq: total + 3,
        method: "GET",
        idempotencyKey: null,
        idempotencyKeyUse: null,
      }),
    ]);
    expect((await control("GET", "/requests")).body.log).toBeUndefined();
    expect((await control("GET", "/requests?after=-1")).status).toBe(400);
  });

  it("loses the response of a request it is told to, once the gateway has handled it", async () => {
    const count = async () =>
      ((await (await get("/agents", launcher.info.keys.retry)).json()) as { pagination: { total: number } })
        .pagination.total;
    const agents = await count();
    expect(
      await control("POST", "/gateway/drop-response", { count: 1, method: "post", path: "/v1/agents" }),
    ).toEqual({ status: 200, body: { armed: 1 } });
    const { total } = (await control("GET", "/requests")).body as { total: number };
    await expect(create({ name: "lost" }, "launcher-drop-1")).rejects.toThrow();
    expect(await count()).toBe(agents + 1);
    const retried = await create({ name: "lost" }, "launcher-drop-1");
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(await count()).toBe(agents + 1);
    const { body } = await control("GET", `/requests?after=${total}`);
    expect(body.log).toEqual([
      expect.objectContaining({ method: "POST", idempotencyKeyUse: 1, status: 201, dropped: true }),
      expect.objectContaining({ method: "GET", dropped: false }),
      expect.objectContaining({ method: "POST", idempotencyKeyUse: 2, status: 201, replayed: true }),
      expect.objectContaining({ method: "GET", dropped: false }),
    ]);
  });

  it("takes * for any one segment of the path, and loses a message's reply", async () => {
    const agent = (
      (await (await create({ name: "talker" }, "launcher-drop-2")).json()) as { data: { id: string } }
    ).data;
    const send = () =>
      fetch(`${launcher.info.baseURL}/agents/${agent.id}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${launcher.info.keys.retry}`,
          "content-type": "application/json",
          "idempotency-key": "launcher-drop-3",
        },
        body: JSON.stringify({ text: "once" }),
      });
    expect(
      (await control("POST", "/gateway/drop-response", { method: "POST", path: "/v1/agents/*/messages" }))
        .status,
    ).toBe(200);
    // Not a message: the rule stays for the next one.
    expect((await create({ name: "bystander" }, "launcher-drop-4")).status).toBe(201);
    await expect(send()).rejects.toThrow();
    const again = await send();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as { data: { text: string } }).data.text).toBe("Echo: once");
  });

  it("cuts a stream after its first events with afterEvents", async () => {
    const agent = (
      (await (await create({ name: "streamer" }, "launcher-drop-5")).json()) as { data: { id: string } }
    ).data;
    await control("POST", "/provider/answer", { text: "one two three four", chunkDelayMs: 30 });
    expect(
      await control("POST", "/gateway/drop-response", {
        method: "POST",
        path: "/v1/agents/*/messages",
        afterEvents: 2,
      }),
    ).toEqual({ status: 200, body: { armed: 1 } });
    const res = await fetch(`${launcher.info.baseURL}/agents/${agent.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${launcher.info.keys.retry}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "count", stream: true, onDisconnect: "continue" }),
    });
    expect(res.status).toBe(200);
    const text = await res.text().catch(() => null);
    // The body breaks after the second event, or ends there: either way, no more than two events arrive.
    if (text !== null) expect(text.match(/^id: /gm)).toHaveLength(2);
  });

  it("refuses a drop-response rule it cannot follow", async () => {
    for (const rule of [
      { method: "POST" },
      { method: "FETCH", path: "/v1/agents" },
      { method: "POST", path: "/agents" },
      { method: "POST", path: "/v1/agents?dryRun=true" },
      { method: "POST", path: "/v1/agents", count: 0 },
      { method: "POST", path: "/v1/agents", times: 1 },
      { method: "POST", path: "/v1/agents/*/messages", afterEvents: 0 },
    ]) {
      expect((await control("POST", "/gateway/drop-response", rule)).status, JSON.stringify(rule)).toBe(400);
    }
  });

  it("queues scripted provider answers and refuses what it does not know", async () => {
    expect(await control("POST", "/provider/answer", [{ status: 503 }, { text: "hi" }])).toEqual({
      status: 200,
      body: { queued: 2 },
    });
    expect((await control("POST", "/provider/answer", { status: 503, bogus: 1 })).status).toBe(400);
    expect((await control("POST", "/provider/answer", "nope")).status).toBe(400);
    expect((await control("POST", "/provider/reset")).status).toBe(200);
    expect((await control("GET", "/nothing")).status).toBe(404);
  });

  it("names a webhook sink that takes the service's deliveries", async () => {
    const { info } = launcher;
    const send = (method: string, path: string, body?: unknown) =>
      fetch(`${info.baseURL}${path}`, {
        method,
        headers: { authorization: `Bearer ${info.keys.full}`, "content-type": "application/json" },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const created = await send("POST", "/webhooks", { url: info.webhookURL, events: ["agent.deleted"] });
    expect(created.status).toBe(201);
    const endpoint = ((await created.json()) as { data: { id: string } }).data;
    try {
      expect((await send("POST", `/webhooks/${endpoint.id}/test`)).status).toBe(200);
      let status = "pending";
      for (let tries = 0; status === "pending" && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const listed = await (await send("GET", `/webhooks/${endpoint.id}/deliveries`)).json();
        status = (listed as { data: { status: string; responseStatus: number | null }[] }).data[0]!.status;
      }
      expect(status).toBe("succeeded");
    } finally {
      await send("DELETE", `/webhooks/${endpoint.id}`);
    }
  });

  it("serves the providers it is asked to, and names its data directory for the admin CLI", async () => {
    expect(launcher.info.providers).toEqual(["openai", "local"]);
    const hosted = await startLauncher({ providers: ["openai", "anthropic"] });
    try {
      expect(hosted.info.providers).toEqual(["openai", "anthropic"]);
      expect(hosted.info.dataDir).toBe(hosted.dataDir);
      const post = (body: unknown) =>
        fetch(`${hosted.info.baseURL}/agents`, {
          method: "POST",
          headers: { authorization: `Bearer ${hosted.info.keys.full}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      // local is not served here: the agent is kept with a warning naming what enables it.
      const unserved = await post({ name: "a", modelProvider: "local" });
      expect(unserved.status).toBe(201);
      const { warnings } = (await unserved.json()) as { warnings: { field: string; issue: string }[] };
      expect(warnings).toEqual([{ field: "modelProvider", issue: expect.stringContaining("LOCAL_ENABLED") }]);
      const created = (await (await post({ name: "a", modelProvider: "anthropic" })).json()) as {
        data: { id: string };
      };
      const reply = await fetch(`${hosted.info.baseURL}/agents/${created.data.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${hosted.info.keys.full}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "hello" }),
      });
      expect(((await reply.json()) as { data: { text: string } }).data.text).toBe("Echo: hello");
    } finally {
      await hosted.close();
    }
  });

  it("removes its data directory when closed", async () => {
    const other = await startLauncher();
    const created = await fetch(`${other.info.baseURL}/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${other.info.keys.full}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "temp" }),
    });
    expect(created.status).toBe(201);
    const dataDir = other.dataDir;
    expect(existsSync(dataDir)).toBe(true);
    await other.close();
    expect(existsSync(dataDir)).toBe(false);
  });
});
