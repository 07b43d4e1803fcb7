import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ACCEPTED_MODEL_PROVIDERS, exportedCharacterFile, importCharacter } from "@agentry/characters";
import { CHARACTER_CORPUS, corpusFile, secretValues } from "@agentry/characters/testing";
import { afterAll, describe, expect, test } from "vitest";
import {
  cleanUp,
  createAccount,
  lines,
  oneLine,
  openTestStore,
  run,
  tempDataDir,
  tempDir,
} from "./harness.js";

afterAll(cleanUp);

/** The corpus files written out, each at an absolute path. */
async function corpusFiles(names: readonly string[]): Promise<string[]> {
  const dir = await tempDir();
  return Promise.all(
    names.map(async (name) => {
      const at = path.join(dir, name);
      await writeFile(at, JSON.stringify(corpusFile(name)));
      return at;
    }),
  );
}

const agentIds = (stdout: string) => [...stdout.matchAll(/agt_[0-9A-Z]{26}/g)].map((match) => match[0]);

describe("agents import", () => {
  test("creates an agent per file, as the import maps it, with a line each", async () => {
    const dataDir = await tempDataDir();
    const account = await createAccount(dataDir, ["acme"]);
    const names = CHARACTER_CORPUS.map((entry) => entry.file);
    const files = await corpusFiles(names);

    const result = await run(["agents", "import", ...files, "--account", "acme"], dataDir);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const output = lines(result.stdout);
    expect(output).toHaveLength(files.length);
    const ids = agentIds(result.stdout);
    expect(ids).toHaveLength(files.length);
    expect(output[names.indexOf("v1-minimal.json")]).toBe(
      `${files[names.indexOf("v1-minimal.json")]}: ${ids[names.indexOf("v1-minimal.json")]}`,
    );
    expect(output[names.indexOf("v0-groq-trader.json")]).toMatch(
      /\(8 warnings: knowledge\[1\], knowledge\[2\], modelProvider,/,
    );

    const store = await openTestStore(dataDir);
    for (const [i, name] of names.entries()) {
      const expected = importCharacter(corpusFile(name));
      if (!expected.ok) throw new Error(`${name} refused`);
      const stored = await store.getAgent(account.id, ids[i]!);
      expect(stored).toMatchObject(expected.agent);
    }
  });

  test("prints the problems of the files that fail, creates the others, and exits 1", async () => {
    const dataDir = await tempDataDir();
    const account = await createAccount(dataDir, ["acme"]);
    const dir = await tempDir();
    const [good] = await corpusFiles(["v1-sage.json"]);
    const bad = path.join(dir, "bad.json");
    await writeFile(bad, JSON.stringify({ bio: ["", "ok"], modelProvider: "bedrock" }));
    const broken = path.join(dir, "broken.json");
    await writeFile(broken, "{ not json");
    const huge = path.join(dir, "huge.json");
    await writeFile(huge, JSON.stringify({ name: "Huge", lore: ["x".repeat(1024 * 1024)] }));
    const missing = path.join(dir, "missing.json");

    const result = await run(
      ["agents", "import", bad, good!, broken, huge, missing, "--account", "acme"],
      dataDir,
    );
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toBe("agentry agents import: 4 of 5 files failed");
    const output = lines(result.stdout);
    expect(output[0]).toBe(
      `${bad}: failed: name: is required; bio[0]: must not be empty; modelProvider: must be one of: ${ACCEPTED_MODEL_PROVIDERS.join(", ")}`,
    );
    expect(output[1]).toMatch(new RegExp(`^${good}: agt_`));
    expect(output.slice(2)).toEqual([
      `${broken}: failed: file: is not valid JSON`,
      `${huge}: failed: file: is larger than 1048576 bytes (1 MiB)`,
      `${missing}: failed: file: does not exist`,
    ]);
    const store = await openTestStore(dataDir);
    const page = await store.listAgents(account.id, {
      page: 1,
      limit: 100,
      sortBy: "createdAt",
      order: "asc",
    });
    expect(page.items.map((agent) => agent.name)).toEqual(["Sage"]);
  });

  test("holds the account's quota, file by file", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["small", "--tier", "enterprise", "--limit", "maxAgents=1"]);
    const files = await corpusFiles(["v1-minimal.json", "v1-sage.json"]);
    const result = await run(["agents", "import", ...files, "--account", "small"], dataDir);
    expect(result.code).toBe(1);
    const output = lines(result.stdout);
    expect(output[0]).toMatch(/: agt_/);
    expect(output[1]).toMatch(/: failed: file: .*maximum of 1 agents/);
  });

  test("--dry-run stores nothing; --json prints every warning and problem", async () => {
    const dataDir = await tempDataDir();
    const account = await createAccount(dataDir, ["acme"]);
    const files = await corpusFiles(["v0-groq-trader.json"]);
    const dry = await run(["agents", "import", ...files, "--account", "acme", "--dry-run"], dataDir);
    expect(dry).toMatchObject({ code: 0, stderr: "" });
    expect(dry.stdout).toMatch(/: would create 'Quill' \(8 warnings/);
    const store = await openTestStore(dataDir);
    expect(
      (await store.listAgents(account.id, { page: 1, limit: 10, sortBy: "createdAt", order: "asc" })).total,
    ).toBe(0);

    const json = await run(["agents", "import", ...files, "--account", "acme", "--json"], dataDir);
    const [outcome] = JSON.parse(json.stdout) as {
      agentId: string;
      warnings: { field: string }[];
      problems: [];
    }[];
    expect(outcome!.agentId).toMatch(/^agt_/);
    expect(outcome!.problems).toEqual([]);
    expect(outcome!.warnings.map((warning) => warning.field)).toContain("settings.secrets");
  });

  test.each([
    [["agents", "import", "--account", "acme"], "missing FILE..."],
    [["agents", "import", "a.json"], "missing --account NAME"],
  ])("%j is a usage error", async (args, message) => {
    const dataDir = await tempDataDir();
    const result = await run(args, dataDir);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toContain(message);
  });
});

describe("agents export", () => {
  test("writes the agent as a character file, without secrets, that imports back to the same agent", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const files = await corpusFiles(["v1-deepseek-secrets.json"]);
    const [id] = agentIds((await run(["agents", "import", ...files, "--account", "acme"], dataDir)).stdout);

    const printed = await run(["agents", "export", id!], dataDir);
    expect(printed).toMatchObject({ code: 0, stderr: "" });
    const file = JSON.parse(printed.stdout) as Record<string, unknown>;
    expect(exportedCharacterFile.safeParse(file).success).toBe(true);
    for (const secret of secretValues(corpusFile("v1-deepseek-secrets.json")))
      expect(printed.stdout).not.toContain(secret);

    const out = path.join(await tempDir(), "cipher.character.json");
    const written = await run(["agents", "export", id!, "--out", out], dataDir);
    expect(written).toMatchObject({ code: 0, stderr: "" });
    expect(written.stdout).toBe(`Wrote agent ${id} (Cipher) to ${out}.\n`);
    expect(JSON.parse(await readFile(out, "utf8"))).toEqual(file);

    const original = importCharacter(corpusFile("v1-deepseek-secrets.json"));
    const again = importCharacter(file);
    if (!original.ok || !again.ok) throw new Error("refused");
    const { secrets: _hidden, ...settings } = original.agent.settings;
    expect(again.agent).toEqual({ ...original.agent, settings });
  });

  test("fails for an unknown agent, and refuses what is not an agent id", async () => {
    const dataDir = await tempDataDir();
    await createAccount(dataDir, ["acme"]);
    const unknown = await run(["agents", "export", "agt_01JAAAAAAAAAAAAAAAAAAAAAAA"], dataDir);
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toBe(
      "agentry agents export: no agent with id 'agt_01JAAAAAAAAAAAAAAAAAAAAAAA'",
    );
    const malformed = await run(["agents", "export", "key_01JAAAAAAAAAAAAAAAAAAAAAAA"], dataDir);
    expect(malformed.code).toBe(2);
  });
});
