import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, PUBLIC_BASE_URL, startHarness, type Tenant } from "./harness.js";

let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  // The agents name hosted providers, which must be configured to be accepted; nothing here calls them.
  h = await startHarness({ OPENAI_API_KEY: "sk-unused", ANTHROPIC_API_KEY: "sk-unused" });
  tenant = await h.tenant();
});
afterAll(() => h.close());

const full = {
  name: "  Ada  ",
  bio: ["Mathematician", "First programmer"],
  personality: { tone: "warm", traits: ["curious"] },
  knowledge: ["analysis"],
  goals: ["teach"],
  clients: ["discord", { type: "telegram", chatId: "42" }],
  settings: { temperature: 0.3 },
  modelProvider: "openai",
  model: "gpt-4o-mini",
  plugins: ["time", { name: "calc", enabled: false, config: { precision: 4 } }],
};

describe("POST /v1/agents happy", () => {
  it("creates an active agent and returns the record with 201", async () => {
    const res = await h.request<{ success: boolean; data: Record<string, unknown> }>("POST", "/v1/agents", {
      key: tenant.key,
      body: full,
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const agent = res.body.data;
    expect(agent.id).toMatch(/^agt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(agent).toMatchObject({ ...full, name: "Ada", status: "active", statusReason: null });
    expect(agent.apiEndpoint).toBe(`${PUBLIC_BASE_URL}/v1/agents/${agent.id}/messages`);
    expect(Date.parse(agent.createdAt as string)).toBeGreaterThan(Date.now() - 60_000);
    expect(agent.updatedAt).toBe(agent.createdAt);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("fills defaults for omitted fields", async () => {
    const res = await h.request<{ data: Record<string, unknown> }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Minimal" },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      bio: [],
      personality: {},
      knowledge: [],
      goals: [],
      clients: [],
      settings: {},
      modelProvider: null,
      model: null,
      plugins: [],
    });
  });

  it("accepts a content type with a charset", async () => {
    const res = await h.request("POST", "/v1/agents", {
      key: tenant.key,
      rawBody: JSON.stringify({ name: "Charset" }),
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(res.status).toBe(201);
  });
});

describe("POST /v1/agents errors", () => {
  const invalid = async (body: unknown) => {
    const res = await h.request<ErrorBody>("POST", "/v1/agents", { key: tenant.key, body });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe("INVALID_REQUEST");
    expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
    return res.body.error;
  };

  it("requires a name", async () => {
    const error = await invalid({ bio: ["x"] });
    expect(error.details).toContainEqual({ field: "name", issue: expect.any(String) });
  });

  it("refuses a blank or too long name", async () => {
    expect((await invalid({ name: "   " })).details?.[0]?.field).toBe("name");
    expect((await invalid({ name: "x".repeat(201) })).details?.[0]?.field).toBe("name");
  });

  it("names the exact array item that is wrong", async () => {
    const error = await invalid({ name: "A", bio: ["ok", "fine", 3] });
    expect(error.details).toEqual([{ field: "bio[2]", issue: "must be a string" }]);
  });

  it("refuses wrong types of every field", async () => {
    const error = await invalid({
      name: 5,
      personality: [],
      knowledge: "x",
      settings: "y",
      clients: [7],
      plugins: [{ name: "p", extra: 1 }],
    });
    const fields = error.details?.map((d) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        "name",
        "personality",
        "knowledge",
        "settings",
        "clients[0]",
        "plugins[0].extra",
      ]),
    );
  });

  it("refuses unknown fields by name", async () => {
    const error = await invalid({ name: "A", colour: "blue" });
    expect(error.details).toEqual([{ field: "colour", issue: "unknown field" }]);
  });

  it("refuses status, id and createdAt on create", async () => {
    const error = await invalid({
      name: "A",
      status: "active",
      id: "agt_x",
      createdAt: "2020-01-01T00:00:00Z",
    });
    expect(error.details?.map((d) => d.field).sort()).toEqual(["createdAt", "id", "status"]);
    expect(error.details?.find((d) => d.field === "status")?.issue).toMatch(/create/);
  });

  it("refuses an unsupported provider, naming the supported ones", async () => {
    const error = await invalid({ name: "A", modelProvider: "acme" });
    expect(error.details?.[0]).toEqual({
      field: "modelProvider",
      issue: expect.stringContaining("openai, anthropic, local"),
    });
  });

  it("bounds arrays and string items", async () => {
    expect(
      (await invalid({ name: "A", goals: Array.from({ length: 101 }, () => "g") })).details?.[0]?.field,
    ).toBe("goals");
    expect((await invalid({ name: "A", knowledge: ["k".repeat(10_001)] })).details?.[0]?.field).toBe(
      "knowledge[0]",
    );
    expect((await invalid({ name: "A", bio: [""] })).details?.[0]?.field).toBe("bio[0]");
  });

  it("refuses the NUL character anywhere, naming where", async () => {
    expect((await invalid({ name: "A\u0000" })).details).toEqual([
      { field: "name", issue: "must not contain the NUL character (U+0000)" },
    ]);
    expect(
      (await invalid({ name: "A", personality: { traits: ["ok", "b\u0000d"] } })).details?.[0]?.field,
    ).toBe("personality.traits[1]");
  });

  it("bounds the generation settings", async () => {
    const error = await invalid({
      name: "A",
      settings: { temperature: 3, maxTokens: 0, toolChoice: "always", other: "kept" },
    });
    expect(error.details?.map((d) => d.field).sort()).toEqual([
      "settings.maxTokens",
      "settings.temperature",
      "settings.toolChoice",
    ]);
    const ok = await h.request<{ data: { settings: Record<string, unknown> } }>("POST", "/v1/agents", {
      key: tenant.key,
      body: {
        name: "A",
        settings: { temperature: 2, maxTokens: 8192, toolChoice: "required", other: "kept" },
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.settings.toolChoice).toBe("required");
  });

  it("refuses a body that is not an object", async () => {
    await invalid([{ name: "A" }]);
    await invalid("A");
  });

  it("answers 400 for malformed JSON and empty bodies", async () => {
    for (const rawBody of ["{", "", "nul"]) {
      const res = await h.request<ErrorBody>("POST", "/v1/agents", {
        key: tenant.key,
        rawBody,
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("INVALID_REQUEST");
    }
  });

  it("answers 415 for a body that is not JSON", async () => {
    const res = await h.request<ErrorBody>("POST", "/v1/agents", {
      key: tenant.key,
      rawBody: "name=A",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  it("answers 413 above 1 MiB", async () => {
    const res = await h.request<ErrorBody>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "A", settings: { blob: "x".repeat(1024 * 1024) } },
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("answers 403 INSUFFICIENT_QUOTA once the account holds its maximum", async () => {
    const small = await h.tenant({ maxAgents: 2 });
    for (const name of ["one", "two"]) {
      expect((await h.request("POST", "/v1/agents", { key: small.key, body: { name } })).status).toBe(201);
    }
    const res = await h.request<ErrorBody>("POST", "/v1/agents", { key: small.key, body: { name: "three" } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("INSUFFICIENT_QUOTA");
    expect(res.body.error.message).toMatch(/2/);
  });
});

describe("POST /v1/agents security", () => {
  it("answers 401 without a key", async () => {
    const res = await h.request<ErrorBody>("POST", "/v1/agents", { body: { name: "A" } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("UNAUTHORIZED");
  });

  it("answers 403 FORBIDDEN to a key without agents:write", async () => {
    const readOnly = await tenant.keyWith(["agents:read"]);
    const res = await h.request<ErrorBody>("POST", "/v1/agents", { key: readOnly.key, body: { name: "A" } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("FORBIDDEN");
    expect(res.body.error.message).toContain("agents:write");
  });
});
