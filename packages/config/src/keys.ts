import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/** Whether a value is the base64 of 32 bytes, as every sealing key (SECRETS_KEY, WEBHOOK_SECRETS_KEY) is written. */
export function isSealingKey(value: string): boolean {
  return /^[A-Za-z0-9+/]+={0,2}$/.test(value.trim()) && Buffer.from(value, "base64").length === 32;
}

/** A sealing key variable: the base64 of 32 random bytes. */
export const sealingKey = () =>
  z
    .string()
    .refine(isSealingKey, { message: "must be the base64 of 32 random bytes (openssl rand -base64 32)" });

export interface KeyInDataDirOptions {
  /** The variable's value when set: it wins. */
  value: string | undefined;
  dataDir: string;
  /** The file in `dataDir` that keeps the generated key, e.g. `secrets.key`. */
  file: string;
  /** Told once, when the key is generated: where it is, to be backed up with the data it seals. */
  onGenerated(path: string): void;
}

/**
 * A sealing key for a deployment on one machine that sets none: the variable's value when set, else the key kept
 * in `<dataDir>/<file>`, generated (32 random bytes, mode 0600) on first start. Scaled-out services require the
 * variable instead, since their processes share no directory.
 */
export function keyInDataDir(options: KeyInDataDirOptions): string {
  if (options.value) return options.value;
  const path = join(options.dataDir, options.file);
  mkdirSync(options.dataDir, { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString("base64")}\n`, { flag: "wx", mode: 0o600 });
    options.onGenerated(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const key = readFileSync(path, "utf8").trim();
  if (!isSealingKey(key)) throw new Error(`${path} does not hold the base64 of 32 bytes`);
  return key;
}
