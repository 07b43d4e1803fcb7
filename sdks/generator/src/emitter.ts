/**
 * What a language emitter is, how emitters are found, and how their files are written and compared. An emitter is
 * any `src/<language>.ts` exporting `emitter`, so adding a language needs no change here or in `main.ts`.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ApiModel } from "./model.js";

/** One generated file. */
export interface GeneratedFile {
  /** Relative to `sdks/`, with `/` separators: `python/src/agentry/_generated/models.py`. */
  path: string;
  contents: string;
}

/** Writes one language's generated files from the model. */
export interface Emitter {
  /** `python`, `go`, `ruby`. */
  language: string;
  /**
   * Directories relative to `sdks/` that hold this language's generated files and nothing else: they are
   * emptied before writing, and the drift check compares them whole, so a file no longer generated is noticed.
   */
  outputDirs: string[];
  /**
   * Optional: the files of `outputDirs` that are this emitter's, by their path relative to `sdks/`, when its
   * generated files must share a directory with hand-written ones (a Go package is one directory). Only those are
   * removed before writing and compared. Default: every file of `outputDirs`.
   */
  generatedFiles?: RegExp;
  /** Every file of `outputDirs`. Must be deterministic: the same model gives the same bytes. */
  emit(model: ApiModel): GeneratedFile[];
}

/** The command that regenerates every SDK; drift messages name it. */
export const GENERATE_COMMAND = "pnpm --filter @agentry/sdk-generator generate";

const SRC_DIR = dirname(fileURLToPath(import.meta.url));
const NOT_EMITTERS = new Set(["main.ts", "emitter.ts", "model.ts", "text.ts"]);

/** Every emitter in `src/`, sorted by language. */
export async function loadEmitters(): Promise<Emitter[]> {
  const emitters: Emitter[] = [];
  for (const file of readdirSync(SRC_DIR).sort()) {
    if (
      !file.endsWith(".ts") ||
      file.endsWith(".test.ts") ||
      file.endsWith(".d.ts") ||
      NOT_EMITTERS.has(file)
    ) {
      continue;
    }
    const module = (await import(pathToFileURL(join(SRC_DIR, file)).href)) as { emitter?: Emitter };
    if (module.emitter !== undefined) emitters.push(module.emitter);
  }
  return emitters.sort((a, b) => (a.language < b.language ? -1 : a.language > b.language ? 1 : 0));
}

/** Runs `emitter` and checks that its files stay inside its output directories and do not repeat. */
export function emitFiles(emitter: Emitter, model: ApiModel): GeneratedFile[] {
  const files = emitter.emit(model);
  const seen = new Set<string>();
  for (const file of files) {
    if (
      !emitter.outputDirs.some((dir) => file.path.startsWith(`${dir}/`)) ||
      !isGenerated(emitter, file.path)
    ) {
      throw new Error(`${emitter.language}: ${file.path} is outside its output directories`);
    }
    if (seen.has(file.path)) throw new Error(`${emitter.language}: ${file.path} is emitted twice`);
    seen.add(file.path);
  }
  return files;
}

/** Replaces the contents of the emitter's output directories under `root` (normally `sdks/`) with `files`. */
export function writeFiles(root: string, emitter: Emitter, files: GeneratedFile[]): void {
  for (const dir of emitter.outputDirs) {
    if (emitter.generatedFiles === undefined) rmSync(join(root, dir), { recursive: true, force: true });
    else for (const path of generatedFilesIn(root, emitter, dir)) rmSync(join(root, path), { force: true });
  }
  for (const file of files) {
    const target = join(root, file.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.contents);
  }
}

/** Files of `dir` under `root`, relative to `root` with `/` separators; none when it does not exist. */
export function listFiles(root: string, dir: string): string[] {
  const start = join(root, dir);
  const out: string[] = [];
  const visit = (path: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(path);
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(path, entry);
      // Interpreter caches (`__pycache__`) are not the generator's and are ignored by git anyway.
      if (entry === "__pycache__") continue;
      if (statSync(full).isDirectory()) visit(full);
      else out.push(relative(root, full).split(sep).join("/"));
    }
  };
  visit(start);
  return out.sort();
}

/** How the files under `root` differ from what the emitter generates: paths added, missing or changed. */
export function drift(root: string, emitter: Emitter, files: GeneratedFile[]): string[] {
  const expected = new Map(files.map((file) => [file.path, file.contents]));
  const problems: string[] = [];
  const present = new Set(emitter.outputDirs.flatMap((dir) => generatedFilesIn(root, emitter, dir)));
  for (const [path, contents] of expected) {
    if (!present.has(path)) problems.push(`missing: ${path}`);
    else if (readFileSync(join(root, path), "utf8") !== contents) problems.push(`differs: ${path}`);
  }
  for (const path of present) {
    if (!expected.has(path)) problems.push(`not generated: ${path}`);
  }
  return problems.sort();
}

function isGenerated(emitter: Emitter, path: string): boolean {
  return emitter.generatedFiles === undefined || emitter.generatedFiles.test(path);
}

/** The emitter's files in `dir` under `root`. */
function generatedFilesIn(root: string, emitter: Emitter, dir: string): string[] {
  return listFiles(root, dir).filter((path) => isGenerated(emitter, path));
}
