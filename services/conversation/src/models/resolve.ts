import { readdir, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { DEFAULT_LOCAL_MODEL, type ModelDescriptor } from "./catalog.js";
import { type FetchModelOptions, fetchModel, ModelFetchError } from "./fetch.js";
import { fileProblem, ggufProblem } from "./verify.js";

/** Where the local model comes from (README, "Local model"). */
export interface ModelLocation {
  /** LOCAL_MODEL_PATH: a GGUF chat model of the operator's choosing, used as it is, never fetched. */
  path?: string | undefined;
  /** LOCAL_MODEL_DIR (default `<DATA_DIR>/models`): where the default model is cached, and fetched to. */
  dir: string;
  /** The default model; SmolLM2-135M-Instruct unless a test names another. */
  model?: ModelDescriptor;
}

export interface ResolvedModel {
  path: string;
  /** The name replies report: the descriptor's, or the file's without `.gguf`. */
  name: string;
}

export interface EnsureModelOptions extends FetchModelOptions {
  /** False: only a file already there will do (no download). True unless set. */
  fetch?: boolean;
}

/** The model cannot be had; the message says what the operator can do about it. */
export class LocalModelError extends Error {
  override readonly name = "LocalModelError";
}

/**
 * The per-machine cache that tests and benchmarks share (`~/.cache/agentry/models`), so the model is fetched
 * once per machine rather than once per data directory. CI fills it with `pnpm models:pull --dir` first.
 */
export function sharedModelDir(): string {
  return join(homedir(), ".cache", "agentry", "models");
}

/**
 * The model file to load: LOCAL_MODEL_PATH when set (it must be a GGUF file); else the default model cached in
 * the model directory, verified by size and SHA-256 (a corrupt copy is fetched again); else the default model
 * fetched from its sources. Throws LocalModelError saying what to do when none of that works.
 */
export async function ensureModel(
  location: ModelLocation,
  options: EnsureModelOptions,
): Promise<ResolvedModel> {
  if (location.path) {
    const problem = await ggufProblem(location.path);
    if (problem) {
      throw new LocalModelError(
        `LOCAL_MODEL_PATH is ${location.path}, but ${problem}. Point LOCAL_MODEL_PATH at a GGUF chat model, ` +
          "or unset it to use the default model (fetched on first use, or ahead of time with `pnpm models:pull`).",
      );
    }
    return { path: location.path, name: basename(location.path).replace(/\.gguf$/i, "") };
  }

  const model = location.model ?? DEFAULT_LOCAL_MODEL;
  const cached = join(location.dir, model.file);
  const problem = await fileProblem(cached, model);
  if (problem === undefined) return { path: cached, name: model.name };
  if (problem !== "it does not exist") {
    options.logger.warn({ path: cached, problem }, "the cached model file is corrupt; fetching it again");
    await rm(cached, { force: true });
  }
  await removeStaleDownloads(location.dir, model);
  if (options.fetch === false) {
    throw new LocalModelError(
      `The local model ${model.name} is not in ${location.dir}. Run \`pnpm models:pull\` to fetch it, ` +
        "or set LOCAL_MODEL_PATH to a GGUF chat model.",
    );
  }
  try {
    return { path: await fetchModel(model, location.dir, options), name: model.name };
  } catch (error) {
    if (!(error instanceof ModelFetchError)) throw error;
    throw new LocalModelError(
      `The local model ${model.name} is not in ${location.dir} and could not be fetched ` +
        `(${error.failures.join("; ")}). Run \`pnpm models:pull\` where the network allows it and copy ` +
        `${model.file} into ${location.dir}, or set LOCAL_MODEL_PATH to a GGUF chat model.`,
    );
  }
}

/** Downloads older than this were left by a process that died; newer ones may belong to one still running. */
const STALE_DOWNLOAD_MS = 60 * 60 * 1000;

async function removeStaleDownloads(dir: string, model: ModelDescriptor): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(`${model.file}.`) || !/\.(part|whl)$/.test(name)) continue;
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_DOWNLOAD_MS) await rm(path, { force: true });
  }
}
