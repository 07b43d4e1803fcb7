import { readdirSync, readFileSync } from "node:fs";
import { ensureModel, sharedModelDir } from "@agentry/conversation";
import { silentLogger } from "@agentry/logging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ErrorBody, type Harness, startHarness, type Tenant } from "./harness.js";

/*
 * elizaOS character files in the shapes people have (fixtures/characters: our own text, in the shapes of the
 * v0.x files naming openai, anthropic, llama_local or an OpenAI-compatible service, and of the 1.x files whose
 * plugins choose the model, with ids, secrets, knowledge references and grouped examples), imported on a server
 * with no provider keys, as a first-time user's `pnpm start` is: each is created, with warnings; and each imported
 * with `useDefaultModel=true` answers a message through the real local model.
 */

const DIR = new URL("./fixtures/characters/", import.meta.url);
const FIXTURES = readdirSync(DIR)
  .filter((file) => file.endsWith(".json"))
  .sort()
  .map((file) => ({
    file,
    content: JSON.parse(readFileSync(new URL(file, DIR), "utf8")) as Record<string, unknown>,
  }));

type Warning = { field: string; issue: string };
type AgentJson = {
  id: string;
  name: string;
  modelProvider: string | null;
  model: string | null;
  personality: Record<string, unknown>;
};

let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  // The real default model, from the per-machine cache the CI fills before the tests.
  await ensureModel({ dir: sharedModelDir() }, { logger: silentLogger() });
  h = await startHarness({ LOCAL_MODEL_DIR: sharedModelDir() });
  tenant = await h.tenant();
}, 120_000);
afterAll(() => h?.close());

async function importFile(content: unknown, query = "") {
  return h.request<{ data: AgentJson; warnings: Warning[] } & ErrorBody>(
    "POST",
    `/v1/agents/import${query}`,
    {
      key: tenant.key,
      body: content,
    },
  );
}

describe("real character files on a server with no provider keys", () => {
  it("has fixtures of every generation", () => {
    expect(FIXTURES.map(({ file }) => file.slice(0, 3))).toEqual(expect.arrayContaining(["v0-", "v1-"]));
    expect(FIXTURES.length).toBeGreaterThanOrEqual(6);
  });

  it.each(FIXTURES.map(({ file, content }) => [file, content] as const))(
    "%s imports with 201 and its warnings",
    async (_file, content) => {
      const res = await importFile(content);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data.name).toBe(content.name);
      expect(res.body.warnings.length).toBeGreaterThan(0);
      // A hosted provider named by the file is kept, and the warning says what to set.
      if (res.body.data.modelProvider === "openai" || res.body.data.modelProvider === "anthropic") {
        const variable = res.body.data.modelProvider === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
        expect(res.body.warnings).toContainEqual({
          field: "modelProvider",
          issue: expect.stringContaining(variable),
        });
      }
    },
  );

  it.each(FIXTURES.map(({ file, content }) => [file, content] as const))(
    "%s imported with useDefaultModel answers a message through the local model",
    async (_file, content) => {
      const settings = { ...(content.settings as Record<string, unknown> | undefined), maxTokens: 8 };
      const res = await importFile({ ...content, settings }, "?useDefaultModel=true");
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data).toMatchObject({ modelProvider: null, model: null });
      expect(res.body.warnings.some((warning) => warning.issue.includes("_API_KEY"))).toBe(false);
      if (typeof content.modelProvider === "string") {
        expect(res.body.data.personality.sourceModelProvider).toBe(content.modelProvider);
      }
      const reply = await h.request<{ data: { text: string; modelProvider: string } } & ErrorBody>(
        "POST",
        `/v1/agents/${res.body.data.id}/messages`,
        { key: tenant.key, body: { text: "Hi" } },
      );
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.data.modelProvider).toBe("local");
      expect(reply.body.data.text.length).toBeGreaterThan(0);
    },
    120_000,
  );

  it("a v0.x file naming llama_local with a model the local provider does not run needs useDefaultModel", async () => {
    const file = { name: "Hermes", modelProvider: "llama_local", settings: { model: "hermes" } };
    const refused = await importFile(file);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      { field: "settings.model", issue: expect.stringMatching(/^must be one of the models local serves: /) },
    ]);
    const imported = await importFile(file, "?useDefaultModel=true");
    expect(imported.status).toBe(201);
    expect(imported.body.data.personality).toMatchObject({
      sourceModelProvider: "llama_local",
      sourceModel: "hermes",
    });

    // The export gives the file's model back, and importing it keeps the server's default.
    const exported = await fetch(`${h.url}/v1/agents/${imported.body.data.id}/character`, {
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    const character = (await exported.json()) as { settings: Record<string, unknown> };
    expect(character.settings.model).toBe("hermes");
    const again = await importFile(character);
    expect(again.status).toBe(201);
    expect(again.body.data).toMatchObject({
      modelProvider: null,
      model: null,
      personality: { sourceModelProvider: "llama_local", sourceModel: "hermes" },
    });
  });

  it("a dry run with useDefaultModel answers the agent with the server's default, storing nothing", async () => {
    const content = FIXTURES.find(({ file }) => file.startsWith("v0-openai"))!.content;
    const res = await importFile(content, "?dryRun=true&useDefaultModel=true");
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ modelProvider: null, model: null });
    expect(res.body.data).not.toHaveProperty("id");
  });
});
