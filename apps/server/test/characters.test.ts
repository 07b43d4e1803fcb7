import { exportedCharacterFile, importCharacter } from "@agentry/characters";
import { CHARACTER_CORPUS, corpusFile, secretValues } from "@agentry/characters/testing";
import { type FakeProviderServer, type OpenAIChatBody, startFakeOpenAI } from "@agentry/conversation/testing";
import { clientWarnings } from "@agentry/core";
import { BODY_LIMIT_BYTES } from "@agentry/gateway/openapi";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

type Json = Record<string, unknown>;
interface Agent extends Json {
  id: string;
  name: string;
  settings: Json;
  personality: Json;
  createdAt: string;
  updatedAt: string;
  apiEndpoint: string;
}
interface Imported {
  success: true;
  data: Agent;
  warnings: { field: string; issue: string }[];
}

const MISSING_AGENT = "agt_01JAAAAAAAAAAAAAAAAAAAAAAA";

let openai: FakeProviderServer<OpenAIChatBody>;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: "sk-test-openai" });
  // Anthropic is configured so that files naming it are accepted; nothing here calls it.
  h = await startHarness({
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API_KEY: "sk-test-openai",
    ANTHROPIC_API_KEY: "sk-unused",
    DEFAULT_MODEL_PROVIDER: "openai",
  });
  tenant = await h.tenant();
});
afterAll(async () => {
  await h.close();
  await openai.close();
});

const importFile = (body: unknown, options: { key?: string | null; query?: string } = {}) =>
  h.request<Imported>("POST", `/v1/agents/import${options.query ? `?${options.query}` : ""}`, {
    key: options.key === undefined ? tenant.key : options.key,
    body,
  });

const exportAgent = (id: string, key: string | null = tenant.key) =>
  h.request<Json>("GET", `/v1/agents/${id}/character`, { key });

/** An agent without what the service sets: what an import of its export must give back. */
function fields(agent: Agent): Json {
  const { id: _id, createdAt: _c, updatedAt: _u, apiEndpoint: _a, ...rest } = agent;
  return rest;
}

describe("POST /v1/agents/import and GET /v1/agents/{agentId}/character, over the corpus", () => {
  it.each(CHARACTER_CORPUS.map((entry) => [entry.file] as const))(
    "%s: imported as the package maps it, exported as a 1.x file, imported back to an equal agent",
    async (file) => {
      const content = corpusFile(file);
      const expected = importCharacter(content);
      if (!expected.ok) throw new Error(`${file} is refused`);

      const first = await importFile(content);
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      const agent = first.body.data;
      const { secrets: _hidden, ...settings } = expected.agent.settings;
      expect(fields(agent)).toEqual({
        ...expected.agent,
        settings,
        status: "active",
        statusReason: null,
      });
      // The package's warnings, then those of the file's clients, which a new agent has no secrets for.
      expect(first.body.warnings).toEqual([
        ...expected.warnings,
        ...clientWarnings(expected.agent.clients, new Set(), expected.fieldPaths.clients),
      ]);

      const read = await h.request<{ data: Agent }>("GET", `/v1/agents/${agent.id}`, { key: tenant.key });
      expect(read.body.data).toEqual(agent);

      const exported = await exportAgent(agent.id);
      expect(exported.status).toBe(200);
      expect(exported.headers.get("content-type")).toMatch(/^application\/json/);
      expect(exported.headers.get("content-disposition")).toMatch(
        /^attachment; filename="[a-z0-9-]+\.character\.json"$/,
      );
      expect(exported.body).not.toHaveProperty("success");
      expect(exportedCharacterFile.safeParse(exported.body).success).toBe(true);
      expect(exported.body.name).toBe(content.name);
      expect(exported.body.secrets).toEqual({});

      const second = await importFile(exported.body);
      expect(second.status).toBe(201);
      expect(second.body.data.id).not.toBe(agent.id);
      expect(fields(second.body.data)).toEqual(fields(agent));

      for (const secret of secretValues(content)) {
        for (const body of [first.body, read.body, exported.body, second.body])
          expect(JSON.stringify(body)).not.toContain(secret);
      }
    },
  );

  it("names the file after the agent", async () => {
    const { body } = await importFile(corpusFile("v1-together-unicode.json"));
    const exported = await exportAgent(body.data.id);
    expect(exported.headers.get("content-disposition")).toBe(
      'attachment; filename="zoe-angstrom.character.json"',
    );
  });
});

describe("GET /v1/schemas/character.json", () => {
  it("is served without a key, and holds what the import accepts and refuses", async () => {
    const res = await fetch(`${h.url}/v1/schemas/character.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/schema\+json/);
    const schema = (await res.json()) as Json;
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    const validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);
    for (const { file, content } of CHARACTER_CORPUS) expect(validate(content), file).toBe(true);
    const refused = [
      {},
      { name: " " },
      { name: "a", bio: [""] },
      { name: "a", modelProvider: "bedrock" },
      { name: "a", knowledge: [{ shared: true }] },
      { name: "a", messageExamples: [[{ content: {} }]] },
      { name: "a", lore: ["x\u0000"] },
    ];
    for (const body of refused) {
      expect(validate(body), JSON.stringify(body)).toBe(false);
      expect(importCharacter(body).ok, JSON.stringify(body)).toBe(false);
    }
  });
});

describe("dryRun", () => {
  it("answers 200 with the agent it would create and the warnings, and stores nothing", async () => {
    const own = await h.tenant();
    const content = corpusFile("v0-groq-trader.json");
    const preview = await importFile(content, { key: own.key, query: "dryRun=true" });
    expect(preview.status).toBe(200);
    expect(preview.body.data).not.toHaveProperty("id");
    expect(preview.body.data).toMatchObject({ name: "Quill", modelProvider: "openai" });
    expect(preview.body.data.settings).not.toHaveProperty("secrets");
    expect(preview.body.warnings.length).toBeGreaterThan(0);
    expect(JSON.stringify(preview.body)).not.toContain("gsk-corpus-quill-0002");
    const list = await h.request<{ pagination: { total: number } }>("GET", "/v1/agents", { key: own.key });
    expect(list.body.pagination.total).toBe(0);

    const stored = await importFile(content, { key: own.key, query: "dryRun=false" });
    expect(stored.status).toBe(201);
    expect(fields(stored.body.data)).toMatchObject(preview.body.data);
  });

  it.each(["dryRun=yes", "dryRun=true&dryRun=true", "dry=true"])("refuses %s", async (query) => {
    const res = await importFile({ name: "x" }, { query });
    expect(res.status).toBe(400);
    expect((res.body as unknown as ErrorBody).error.code).toBe("INVALID_REQUEST");
  });
});

describe("POST /v1/agents/import errors", () => {
  it("answers every problem of the file at once, by JSON path", async () => {
    const res = await h.request<ErrorBody>("POST", "/v1/agents/import", {
      key: tenant.key,
      body: {
        bio: ["ok", ""],
        modelProvider: "bedrock",
        knowledge: [{ shared: true }],
        messageExamples: [[{ content: { text: "who?" } }]],
        settings: { temperature: 9 },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("INVALID_REQUEST");
    expect(res.body.error.details?.map((detail) => detail.field)).toEqual([
      "name",
      "bio[1]",
      "messageExamples[0][0]",
      "knowledge[0]",
      "modelProvider",
      "settings.temperature",
    ]);
    expect(res.body.error.details?.find((d) => d.field === "modelProvider")?.issue).toContain("openrouter");
  });

  it("answers 413 to a file over 1 MiB, and 415 to one that is not JSON", async () => {
    const huge = {
      ...corpusFile("v1-minimal.json"),
      lore: Array(200).fill("x".repeat(BODY_LIMIT_BYTES / 150)),
    };
    const tooLarge = await h.request<ErrorBody>("POST", "/v1/agents/import", { key: tenant.key, body: huge });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe("PAYLOAD_TOO_LARGE");
    const form = await h.request<ErrorBody>("POST", "/v1/agents/import", {
      key: tenant.key,
      rawBody: "name=Ada",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(415);
  });

  it("holds the account's quota and spends from the create bucket", async () => {
    const small = await h.tenant({ maxAgents: 1 });
    expect((await importFile({ name: "one" }, { key: small.key })).status).toBe(201);
    const over = await importFile({ name: "two" }, { key: small.key });
    expect(over.status).toBe(403);
    expect((over.body as unknown as ErrorBody).error.code).toBe("INSUFFICIENT_QUOTA");

    const slow = await h.tenant({ limits: { createPerMinute: 1 } });
    expect((await h.request("POST", "/v1/agents", { key: slow.key, body: { name: "a" } })).status).toBe(201);
    const limited = await importFile({ name: "b" }, { key: slow.key });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).not.toBeNull();
  });
});

describe("security", () => {
  it("refuses a missing key, and a key without the scope", async () => {
    expect((await importFile({ name: "x" }, { key: null })).status).toBe(401);
    expect((await exportAgent(MISSING_AGENT, null)).status).toBe(401);
    const readOnly = await tenant.keyWith(["agents:read"]);
    const refused = await importFile({ name: "x" }, { key: readOnly.key });
    expect(refused.status).toBe(403);
    expect((refused.body as unknown as ErrorBody).error.code).toBe("FORBIDDEN");
    const writeOnly = await tenant.keyWith(["agents:write"]);
    const { body } = await importFile({ name: "mine" }, { key: writeOnly.key });
    expect((await exportAgent(body.data.id, writeOnly.key)).status).toBe(403);
    expect((await exportAgent(body.data.id, readOnly.key)).status).toBe(200);
  });

  it("answers 404 for another account's agent, a missing one and a malformed id", async () => {
    const other = await h.tenant();
    const { body } = await importFile(corpusFile("v1-minimal.json"), { key: other.key });
    for (const id of [body.data.id, MISSING_AGENT, "not-an-id"]) {
      const res = await h.request<ErrorBody>("GET", `/v1/agents/${id}/character`, { key: tenant.key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("AGENT_NOT_FOUND");
    }
  });
});

describe("secrets", () => {
  const SECRET = "sk-corpus-cipher-0009";

  it("are stored, and no read, list, update or export returns them", async () => {
    const { body } = await importFile(corpusFile("v1-deepseek-secrets.json"));
    const id = body.data.id;
    const stored = await h.gateway.context.agents.getAgent({ accountId: tenant.accountId, id });
    expect(stored.agent?.spec?.settings?.secrets).toEqual({
      DEEPSEEK_API_KEY: SECRET,
      RETRIES: 3,
      VERBOSE: false,
      PUZZLE_SEED: "corpus-seed-0009",
    });

    const reads = [
      await h.request("GET", `/v1/agents/${id}`, { key: tenant.key }),
      await h.request("GET", "/v1/agents?limit=100", { key: tenant.key }),
      await h.request("PATCH", `/v1/agents/${id}`, { key: tenant.key, body: { name: "Cipher II" } }),
      await h.request("PATCH", `/v1/agents/${id}`, {
        key: tenant.key,
        body: { settings: { theme: "dark" } },
      }),
      await exportAgent(id),
    ];
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain(SECRET);
      expect(JSON.stringify(read.body)).not.toContain("corpus-seed-0009");
    }
    expect((reads[3]!.body as { data: Agent }).data.settings).toEqual({ theme: "dark" });
  });

  it("survive an update of settings that leaves them out, and go with one that sends them", async () => {
    const { body } = await importFile({ name: "Keeper", secrets: { TOKEN: "sk-keeper-0001" } });
    const id = body.data.id;
    const secretsOf = async () =>
      (await h.gateway.context.agents.getAgent({ accountId: tenant.accountId, id })).agent?.spec?.settings
        ?.secrets;
    await h.request("PATCH", `/v1/agents/${id}`, { key: tenant.key, body: { settings: { temperature: 1 } } });
    expect(await secretsOf()).toEqual({ TOKEN: "sk-keeper-0001" });
    await h.request("PATCH", `/v1/agents/${id}`, { key: tenant.key, body: { settings: { secrets: {} } } });
    expect(await secretsOf()).toEqual({});
  });

  it("sent on create are hidden the same way", async () => {
    const res = await h.request<{ data: Agent }>("POST", "/v1/agents", {
      key: tenant.key,
      body: { name: "Direct", settings: { secrets: { K: "sk-direct-0001" }, theme: "x" } },
    });
    expect(res.body.data.settings).toEqual({ theme: "x" });
  });
});

describe("an imported character in conversation", () => {
  it("reaches the model with its system prompt, guidelines and example conversations", async () => {
    const { body } = await importFile(corpusFile("v0-classic-openai.json"));
    openai.reply("Maybe.");
    const res = await h.request("POST", `/v1/agents/${body.data.id}/messages`, {
      key: tenant.key,
      body: { text: "Who hired you?" },
    });
    expect(res.status).toBe(200);
    const sent = openai.requests.at(-1)!.body;
    const system = sent.messages[0]!;
    expect(system.role).toBe("system");
    expect(String(system.content)).toMatch(/^You are Marlowe, a tired private investigator/);
    expect(String(system.content)).toContain("- answer questions with a question when cornered");
    expect(sent.messages.slice(1).map((message) => [message.role, message.content])).toEqual([
      ["user", "Can you find my brother?"],
      ["assistant", "Depends. Does he want to be found?"],
      ["user", "Tell me more."],
      ["assistant", "The rest costs extra."],
      ["user", "Who hired you?"],
    ]);
    expect(sent.model).toBe("gpt-4o-mini");
  });
});
