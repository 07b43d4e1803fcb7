import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AgentryError, APIError, BadRequestError, type CharacterFile, NotFoundError } from "../src/index.js";
import { AGENT_ID, agent } from "./helpers.js";
import { fail, hangUp, localServer, ok, sendJson } from "./server.js";

const file: CharacterFile = {
  name: "Eliza",
  bio: "Answers in rhyme.",
  lore: ["Grew up in a library"],
  knowledge: ["Rhymes are fun", { path: "notes/rhymes.md" }],
  plugins: ["@elizaos/plugin-sql"],
  settings: { secrets: { API_TOKEN: "s3cret" }, voice: "soft" },
  clientConfig: { discord: { shouldIgnoreBotMessages: true } },
};

const warnings = [
  { field: "knowledge[1]", issue: "a file or folder reference: kept in personality.knowledgeSources" },
  { field: "plugins[0]", issue: "not in the plugin catalogue" },
];

/** What a dry run answers: the writable fields of the agent, none of those set on creation. */
const draft = {
  name: "Eliza",
  bio: ["Answers in rhyme."],
  personality: { lore: ["Grew up in a library"] },
  knowledge: ["Rhymes are fun"],
  goals: [],
  clients: [],
  settings: { voice: "soft" },
  modelProvider: null,
  model: null,
  plugins: [{ name: "@elizaos/plugin-sql", enabled: false }],
};

describe("agents.importCharacter", () => {
  it("posts the file as it is and answers the agent created with the warnings", async () => {
    const created = agent({ name: "Eliza", bio: ["Answers in rhyme."] });
    const server = await localServer(ok(created, 201, { warnings }));
    const result = await server.client().agents.importCharacter(file);
    expect(result).toEqual({ agent: created, warnings });
    const [seen] = server.requests;
    expect(seen!.method).toBe("POST");
    expect(seen!.url.pathname).toBe("/v1/agents/import");
    expect(seen!.url.search).toBe("");
    expect(seen!.headers["content-type"]).toBe("application/json");
    expect(seen!.body).toEqual(file);
  });

  it("with dryRun, asks for a dry run and answers the agent it would make", async () => {
    const server = await localServer(ok(draft, 200, { warnings }));
    const preview = await server.client().agents.importCharacter(file, { dryRun: true });
    expect(preview).toEqual({ agent: draft, warnings });
    expect(preview.agent).not.toHaveProperty("id");
    expect(server.requests[0]!.url.search).toBe("?dryRun=true");
    expect(server.requests[0]!.body).toEqual(file);
  });

  it("with useDefaultModel, asks for the server's default model, with or without a dry run", async () => {
    const server = await localServer(
      ok(draft, 200, { warnings }),
      ok(agent({ name: "Eliza" }), 201, { warnings }),
    );
    await server.client().agents.importCharacter(file, { dryRun: true, useDefaultModel: true });
    await server.client().agents.importCharacter(file, { useDefaultModel: true });
    expect(server.requests.map((request) => request.url.search)).toEqual([
      "?dryRun=true&useDefaultModel=true",
      "?useDefaultModel=true",
    ]);
  });

  it("an import, a dry run or not, is retried like a read under one Idempotency-Key", async () => {
    for (const dryRun of [true, false]) {
      const server = await localServer(
        fail(503, "AGENT_UNAVAILABLE"),
        hangUp,
        ok(draft, 200, { warnings: [] }),
      );
      expect((await server.client().agents.importCharacter(file, { dryRun })).warnings).toEqual([]);
      expect(server.requests).toHaveLength(3);
      const keys = server.requests.map((request) => request.headers["idempotency-key"]);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Set(keys).size).toBe(1);
    }
  });

  it("reads the file from a path and sends it as it is", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agentry-sdk-"));
    try {
      const path = join(dir, "eliza.character.json");
      await writeFile(path, JSON.stringify(file, null, 2));
      const created = agent({ name: "Eliza" });
      const server = await localServer(ok(created, 201, { warnings }), ok(draft, 200, { warnings }));
      expect(await server.client().agents.importCharacter(path)).toEqual({ agent: created, warnings });
      expect(await server.client().agents.importCharacter(path, { dryRun: true })).toEqual({
        agent: draft,
        warnings,
      });
      expect(server.requests.map((request) => request.body)).toEqual([file, file]);
      expect(server.requests[1]!.url.search).toBe("?dryRun=true");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a path it cannot read, or whose file is not a JSON object, before sending anything", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agentry-sdk-"));
    try {
      await writeFile(join(dir, "broken.json"), "{ name: Eliza");
      await writeFile(join(dir, "list.json"), "[]");
      const server = await localServer(ok(draft, 200, { warnings }));
      for (const [name, message] of [
        ["missing.json", /Cannot read .*missing\.json: ENOENT/],
        ["broken.json", /broken\.json is not JSON/],
        ["list.json", /list\.json does not hold a JSON object/],
      ] as const) {
        const error = await server
          .client()
          .agents.importCharacter(join(dir, name))
          .catch((e: unknown) => e);
        expect(error, name).toBeInstanceOf(AgentryError);
        expect(error, name).not.toBeInstanceOf(APIError);
        expect((error as Error).message, name).toMatch(message);
      }
      expect(server.requests).toHaveLength(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a file with problems is BadRequestError naming each by its path", async () => {
    const details = [
      { field: "name", issue: "is required" },
      { field: "bio", issue: "must be a string or an array of strings" },
    ];
    const server = await localServer(fail(400, "INVALID_REQUEST", { details }));
    const error = await server
      .client()
      .agents.importCharacter({ bio: 5 } as unknown as CharacterFile, { dryRun: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).details).toEqual(details);
    expect(server.requests).toHaveLength(1);
  });
});

describe("agents.exportCharacter", () => {
  it("answers the bare file the service sends, without an envelope", async () => {
    const exported = {
      name: "Eliza",
      bio: ["Answers in rhyme."],
      knowledge: ["Rhymes are fun", { path: "notes/rhymes.md" }],
      plugins: ["@elizaos/plugin-sql"],
      settings: { voice: "soft", secrets: {}, agentry: { personality: { lore: ["Grew up in a library"] } } },
      secrets: {},
    };
    const server = await localServer((_request, res) =>
      sendJson(res, 200, exported, { "content-disposition": 'attachment; filename="eliza.character.json"' }),
    );
    expect(await server.client().agents.exportCharacter(AGENT_ID)).toEqual(exported);
    const [seen] = server.requests;
    expect(`${seen!.method} ${seen!.url.pathname}`).toBe(`GET /v1/agents/${AGENT_ID}/character`);
  });

  it("an unknown agent is NotFoundError", async () => {
    const server = await localServer(fail(404, "AGENT_NOT_FOUND"));
    await expect(server.client().agents.exportCharacter(AGENT_ID)).rejects.toBeInstanceOf(NotFoundError);
  });
});
