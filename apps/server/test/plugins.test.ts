import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger } from "@agentry/logging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

/** A value that must never be seen again outside the registry's sealed column. */
const SECRET = "mcp-token-7c1e4b9a2f-do-not-leak";

let h: Harness;
let tenant: Tenant;
const logText: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logText.push(String(chunk));
      done();
    },
  });
  h = await startHarness(
    { ALLOW_PRIVATE_NETWORKS: "true" },
    createLogger({ service: "server", level: "trace", format: "json", destination: sink }),
  );
  tenant = await h.tenant();
});
afterAll(() => h.close());

async function newAgent(body: Record<string, unknown> = {}): Promise<string> {
  const res = await h.request<{ data: { id: string } }>("POST", "/v1/agents", {
    key: tenant.key,
    body: { name: "Ada", ...body },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

describe("GET /v1/plugins", () => {
  it("lists the installed plugins with their config schemas, secrets and tools", async () => {
    const res = await h.request<{ success: true; data: Record<string, unknown>[] }>("GET", "/v1/plugins", {
      key: tenant.key,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((plugin) => plugin.name)).toEqual([
      "calculator",
      "http",
      "knowledge",
      "mcp",
      "time",
    ]);
    const time = res.body.data.find((plugin) => plugin.name === "time")!;
    expect(time).toEqual({
      name: "time",
      version: "1.0.0",
      description: expect.any(String),
      configSchema: expect.objectContaining({ type: "object", properties: { timeZone: expect.any(Object) } }),
      secrets: [],
      tools: [
        {
          name: "now",
          description: expect.any(String),
          inputSchema: expect.objectContaining({ type: "object" }),
        },
        { name: "add_duration", description: expect.any(String), inputSchema: expect.any(Object) },
        { name: "difference", description: expect.any(String), inputSchema: expect.any(Object) },
      ],
    });
    const mcp = res.body.data.find((plugin) => plugin.name === "mcp")!;
    expect(mcp.configSchema).toMatchObject({ required: ["url"] });
  });

  it("answers any valid key, whatever its scopes, and 401 without one", async () => {
    const { key } = await tenant.keyWith(["usage:read"]);
    expect((await h.request("GET", "/v1/plugins", { key })).status).toBe(200);
    expect((await h.request("GET", "/v1/plugins", { key: null })).status).toBe(401);
  });
});

describe("agents' plugins", () => {
  it("accepts installed plugins with valid configs, and unknown ones disabled", async () => {
    const plugins = [
      "time",
      { name: "calculator", config: { precision: 10 } },
      { name: "http", config: { allow: ["https://api.example.com/v1/"] } },
      { name: "mcp", config: { url: "https://mcp.example.com/mcp", authSecret: "MCP_TOKEN" } },
      { name: "@elizaos/plugin-sql", enabled: false },
    ];
    const agentId = await newAgent({ plugins });
    const res = await h.request<{ data: { plugins: unknown[] } }>("GET", `/v1/agents/${agentId}`, {
      key: tenant.key,
    });
    expect(res.body.data.plugins).toEqual(plugins);
  });

  it("refuses an enabled plugin the catalogue lacks and a config its schema refuses, naming each field", async () => {
    const res = await h.request<ErrorBody>("POST", "/v1/agents", {
      key: tenant.key,
      body: {
        name: "Ada",
        plugins: [
          "web-search",
          { name: "time", config: { timeZone: "Mars/Olympus_Mons" } },
          { name: "http", config: {} },
          { name: "mcp", config: { url: "ftp://x.example/" } },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("INVALID_REQUEST");
    expect(res.body.error.details).toEqual([
      { field: "plugins[0]", issue: expect.stringContaining('"web-search" is not in the plugin catalogue') },
      { field: "plugins[1].config.timeZone", issue: expect.stringContaining("IANA time zone") },
      { field: "plugins[2].config.allow", issue: expect.any(String) },
      { field: "plugins[3].config.url", issue: expect.stringContaining("https URL") },
    ]);
  });

  it("checks plugins on update too, and leaves the agent as it was when refused", async () => {
    const agentId = await newAgent({ plugins: ["time"] });
    const refused = await h.request<ErrorBody>("PATCH", `/v1/agents/${agentId}`, {
      key: tenant.key,
      body: { plugins: [{ name: "calculator", config: { precision: "high" } }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details?.[0]?.field).toBe("plugins[0].config.precision");
    const updated = await h.request<{ data: { plugins: unknown[] } }>("PATCH", `/v1/agents/${agentId}`, {
      key: tenant.key,
      body: { plugins: ["knowledge", { name: "gone", enabled: false }] },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data.plugins).toEqual(["knowledge", { name: "gone", enabled: false }]);
  });

  it("imports a character's installed plugins enabled and keeps the others disabled, with a warning", async () => {
    const res = await h.request<{
      data: { plugins: unknown[] };
      warnings: { field: string; issue: string }[];
    }>("POST", "/v1/agents/import", {
      key: tenant.key,
      body: { name: "Eliza", bio: "A helper.", plugins: ["time", "@elizaos/plugin-sql"] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.plugins).toEqual(["time", { name: "@elizaos/plugin-sql", enabled: false }]);
    expect(res.body.warnings).toEqual([
      { field: "plugins[1]", issue: expect.stringContaining("not in the plugin catalogue") },
    ]);
  });

  it("keeps an installed plugin whose config its schema refuses disabled on import, with a warning", async () => {
    const res = await h.request<{
      data: { plugins: unknown[] };
      warnings: { field: string; issue: string }[];
    }>("POST", "/v1/agents/import?dryRun=true", {
      key: tenant.key,
      body: { name: "Eliza", bio: "A helper.", plugins: ["knowledge", "http"] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.plugins).toEqual(["knowledge", { name: "http", enabled: false, config: {} }]);
    expect(res.body.warnings).toEqual([
      {
        field: "plugins[1]",
        issue: expect.stringMatching(/^its configuration does not suit the plugin \(config\.allow /),
      },
    ]);
  });
});

describe("agent secrets", () => {
  it("sets, lists and deletes secrets, answering names and times only", async () => {
    const agentId = await newAgent();
    const put = await h.request<{ success: true; data: { name: string; updatedAt: string } }>(
      "PUT",
      `/v1/agents/${agentId}/secrets/MCP_TOKEN`,
      { key: tenant.key, body: { value: SECRET } },
    );
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      success: true,
      data: { name: "MCP_TOKEN", updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) },
    });
    await h.request("PUT", `/v1/agents/${agentId}/secrets/A_FIRST`, {
      key: tenant.key,
      body: { value: "x" },
    });
    const list = await h.request<{ data: { name: string }[] }>("GET", `/v1/agents/${agentId}/secrets`, {
      key: tenant.key,
    });
    expect(list.status).toBe(200);
    expect(list.body.data.map((secret) => secret.name)).toEqual(["A_FIRST", "MCP_TOKEN"]);
    const deleted = await h.request("DELETE", `/v1/agents/${agentId}/secrets/MCP_TOKEN`, { key: tenant.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { name: "MCP_TOKEN", deleted: true } });
    const again = await h.request<ErrorBody>("DELETE", `/v1/agents/${agentId}/secrets/MCP_TOKEN`, {
      key: tenant.key,
    });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("SECRET_NOT_FOUND");
  });

  it("answers 400 with details for a bad name or value", async () => {
    const agentId = await newAgent();
    const badName = await h.request<ErrorBody>("PUT", `/v1/agents/${agentId}/secrets/no.dots`, {
      key: tenant.key,
      body: { value: "v" },
    });
    expect(badName.status).toBe(400);
    expect(badName.body.error.details).toEqual([
      { field: "name", issue: expect.stringContaining("1 to 64") },
    ]);
    for (const body of [
      {},
      { value: "" },
      { value: 5 },
      { value: "v", extra: 1 },
      { value: "x".repeat(4097) },
    ]) {
      const res = await h.request<ErrorBody>("PUT", `/v1/agents/${agentId}/secrets/T`, {
        key: tenant.key,
        body,
      });
      expect(res.status, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(res.body.error.details?.length).toBeGreaterThan(0);
    }
  });

  it("needs plugins:manage, and treats another account's agent as missing", async () => {
    const agentId = await newAgent();
    const { key: without } = await tenant.keyWith(["agents:read", "agents:write"]);
    for (const [method, path] of [
      ["PUT", `/v1/agents/${agentId}/secrets/T`],
      ["GET", `/v1/agents/${agentId}/secrets`],
      ["DELETE", `/v1/agents/${agentId}/secrets/T`],
    ] as const) {
      const res = await h.request<ErrorBody>(method, path, {
        key: without,
        ...(method === "PUT" ? { body: { value: "v" } } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("FORBIDDEN");
    }
    const { key: only } = await tenant.keyWith(["plugins:manage"]);
    expect(
      (await h.request("PUT", `/v1/agents/${agentId}/secrets/T`, { key: only, body: { value: "v" } })).status,
    ).toBe(200);

    const stranger = await h.tenant();
    for (const [method, path] of [
      ["PUT", `/v1/agents/${agentId}/secrets/T`],
      ["GET", `/v1/agents/${agentId}/secrets`],
      ["DELETE", `/v1/agents/${agentId}/secrets/T`],
      ["GET", "/v1/agents/not-an-id/secrets"],
    ] as const) {
      const res = await h.request<ErrorBody>(method, path, {
        key: stranger.key,
        ...(method === "PUT" ? { body: { value: "v" } } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe("AGENT_NOT_FOUND");
    }
  });

  it("never shows a secret's value: not in any response, export, log line, error or the database file", async () => {
    const agentId = await newAgent({
      plugins: [{ name: "mcp", config: { url: "https://mcp.example.com/mcp", authSecret: "MCP_TOKEN" } }],
    });
    const bodies: string[] = [];
    const record = async (method: string, path: string, options: Parameters<Harness["request"]>[2] = {}) => {
      const res = await h.request(method, path, { key: tenant.key, ...options });
      bodies.push(JSON.stringify(res.body), JSON.stringify([...res.headers]));
      return res;
    };
    await record("PUT", `/v1/agents/${agentId}/secrets/MCP_TOKEN`, {
      body: { value: SECRET },
      headers: { "Idempotency-Key": "put-secret-1" },
    });
    // The same write replayed from its stored response, and one refused for its key's other request.
    await record("PUT", `/v1/agents/${agentId}/secrets/MCP_TOKEN`, {
      body: { value: SECRET },
      headers: { "Idempotency-Key": "put-secret-1" },
    });
    await record("PUT", `/v1/agents/${agentId}/secrets/MCP_TOKEN`, {
      body: { value: `${SECRET}-2` },
      headers: { "Idempotency-Key": "put-secret-1" },
    });
    // Errors that see the value: a bad name with it, an unknown field beside it, another account's agent.
    await record("PUT", `/v1/agents/${agentId}/secrets/bad.name`, { body: { value: SECRET } });
    await record("PUT", `/v1/agents/${agentId}/secrets/T`, { body: { value: SECRET, other: SECRET } });
    await record("PUT", `/v1/agents/${agentId}/secrets/T`, {
      rawBody: `{"value": "${SECRET}"`,
      headers: { "content-type": "application/json" },
    });
    await record("PUT", "/v1/agents/agt_01JAAAAAAAAAAAAAAAAAAAAAAA/secrets/T", { body: { value: SECRET } });
    await record("GET", `/v1/agents/${agentId}/secrets`);
    await record("GET", `/v1/agents/${agentId}`);
    await record("GET", "/v1/agents");
    await record("GET", `/v1/agents/${agentId}/character`);
    await record("GET", "/v1/plugins");
    await record("PATCH", `/v1/agents/${agentId}`, { body: { settings: { note: "x" } } });

    for (const text of [...bodies, logText.join("")]) expect(text).not.toContain(SECRET);
    expect(logText.join("")).toContain(agentId);

    for (const file of readdirSync(h.dataDir).filter((name) => name.startsWith("registry.db"))) {
      const bytes = readFileSync(join(h.dataDir, file));
      expect(bytes.includes(Buffer.from(SECRET)), file).toBe(false);
      expect(bytes.includes(Buffer.from(SECRET).toString("base64")), file).toBe(false);
    }
  });

  it("are sealed under a key generated into DATA_DIR when SECRETS_KEY is unset, readable only by its owner", () => {
    const path = join(h.dataDir, "secrets.key");
    expect(Buffer.from(readFileSync(path, "utf8").trim(), "base64")).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
