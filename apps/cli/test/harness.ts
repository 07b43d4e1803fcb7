import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openRegistryStore, type RegistryStore } from "@agentry/registry";
import { runCli } from "../src/index.js";

export const PACKAGE_DIR = path.resolve(import.meta.dirname, "..");
const TSX = path.resolve(PACKAGE_DIR, "../../node_modules/.bin/tsx");
const MAIN = path.join(PACKAGE_DIR, "src/main.ts");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  dataDir?: string;
  /** Variables beyond DATA_DIR; INIT_CWD is left out unless given, since `pnpm test` sets it for the runner. */
  env?: Record<string, string>;
  cwd?: string;
}

/** Runs the real CLI as a child process, as `pnpm cli` would. */
export function agentry(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const { INIT_CWD: _initCwd, DATA_DIR: _dataDir, ...inherited } = process.env;
  const env = { ...inherited, ...(options.dataDir ? { DATA_DIR: options.dataDir } : {}), ...options.env };
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [MAIN, ...args], { cwd: options.cwd ?? PACKAGE_DIR, env });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a shell pipeline with the CLI available as `$AGENTRY`. */
export function shell(script: string, options: RunOptions = {}): Promise<CliResult> {
  const { INIT_CWD: _initCwd, ...inherited } = process.env;
  const env = {
    ...inherited,
    AGENTRY: `${TSX} ${MAIN}`,
    ...(options.dataDir ? { DATA_DIR: options.dataDir } : {}),
    ...options.env,
  };
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", script], { cwd: options.cwd ?? PACKAGE_DIR, env });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const cleanups: (() => Promise<void>)[] = [];

/**
 * Closes the stores and removes the directories the file's tests made; call it in `afterAll`. (A per-test hook
 * imported from vitest would attach to the wrong test when tests run concurrently.)
 */
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** A fresh temporary directory, removed by cleanUp. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "agentry-cli-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A fresh DATA_DIR that does not exist yet: the CLI creates it on first use. */
export async function tempDataDir(): Promise<string> {
  return path.join(await tempDir(), "data");
}

/** Opens the store the CLI writes to, as the service would; closed by cleanUp. */
export async function openTestStore(dataDir: string): Promise<RegistryStore> {
  const store = await openRegistryStore({ dataDir });
  cleanups.push(() => store.close());
  return store;
}

/** Runs the CLI in this process on DATA_DIR and `env`, capturing what it writes; for the many cases of one command. */
export async function run(
  args: string[],
  dataDir: string,
  env: Record<string, string> = {},
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { ...env, DATA_DIR: dataDir },
  });
  return { code, stdout, stderr };
}

/** Every byte of every file under dir (database, WAL, anything else). */
export async function allBytes(dir: string): Promise<Buffer> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
  return Buffer.concat(await Promise.all(files.map((file) => readFile(file))));
}

/** The output's lines without the final newline. */
export function lines(text: string): string[] {
  return text.replace(/\n$/, "").split("\n");
}

/** A mistake is reported as exactly one line on stderr. */
export function oneLine(stderr: string): string {
  const all = lines(stderr);
  if (all.length !== 1 || all[0] === "")
    throw new Error(`expected one line on stderr, got: ${JSON.stringify(stderr)}`);
  return all[0] ?? "";
}

export async function createAccount(dataDir: string, args: string[]): Promise<{ id: string; name: string }> {
  const result = await run(["accounts", "create", ...args, "--json"], dataDir);
  if (result.code !== 0) throw new Error(`accounts create failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as { id: string; name: string };
}

export async function createKey(dataDir: string, args: string[]): Promise<{ id: string; secret: string }> {
  const result = await run(["keys", "create", ...args], dataDir);
  if (result.code !== 0) throw new Error(`keys create failed: ${result.stderr}`);
  const id = /key_[0-9A-Z]{26}/.exec(result.stdout)?.[0];
  const secret = lines(result.stdout).at(-1);
  if (!id || !secret) throw new Error(`unexpected output: ${result.stdout}`);
  return { id, secret };
}
