import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import type { ModelDescriptor } from "./catalog.js";

/** Every GGUF file starts with these four bytes. */
const GGUF_MAGIC = "GGUF";

export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Undefined when the file is the descriptor's, byte for byte; else what is wrong with it. */
export async function fileProblem(path: string, model: ModelDescriptor): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return "it does not exist";
  if (info.size !== model.bytes) return `it has ${info.size} bytes instead of ${model.bytes}`;
  const sha256 = await sha256File(path);
  if (sha256 !== model.sha256) return `its SHA-256 is ${sha256} instead of ${model.sha256}`;
  return undefined;
}

/** Undefined when the path is a readable GGUF file; else what is wrong with it. */
export async function ggufProblem(path: string): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return "it does not exist";
  if (!info.isFile()) return "it is not a file";
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return "it cannot be read";
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    if (bytesRead < 4 || head.toString("latin1") !== GGUF_MAGIC) return "it is not a GGUF model file";
    return undefined;
  } finally {
    await handle.close();
  }
}
