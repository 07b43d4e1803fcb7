import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSealed, sealBytes } from "@agentry/core";
import type { Logger } from "@agentry/logging";

/** The base64 of 32 bytes, as SECRETS_KEY is written. */
export function isSecretsKey(value: string): boolean {
  return /^[A-Za-z0-9+/]+={0,2}$/.test(value.trim()) && Buffer.from(value, "base64").length === 32;
}

/**
 * How agent secrets are kept: each sealed with AES-256-GCM under SECRETS_KEY, bound to its agent and name so that
 * a sealed value copied onto another agent or name does not open. Stored form: `v1.<iv>.<ciphertext>.<tag>`.
 */
export class SecretVault {
  private readonly key: Buffer;

  constructor(keyBase64: string) {
    if (!isSecretsKey(keyBase64)) throw new RangeError("SECRETS_KEY must be the base64 of 32 random bytes");
    this.key = Buffer.from(keyBase64, "base64");
  }

  seal(agentId: string, name: string, value: string): string {
    const { iv, ciphertext, tag } = sealBytes(this.key, value, `${agentId}/${name}`);
    return ["v1", ...[iv, ciphertext, tag].map((part) => part.toString("base64"))].join(".");
  }

  /** The value of a stored form; throws (saying nothing of the value) when the key or binding is not its own. */
  open(agentId: string, name: string, stored: string): string {
    const [version, iv, ciphertext, tag] = stored.split(".");
    if (version !== "v1" || !iv || ciphertext === undefined || !tag) {
      throw new Error(`the stored secret ${name} is malformed`);
    }
    try {
      return openSealed(
        this.key,
        {
          iv: Buffer.from(iv, "base64"),
          ciphertext: Buffer.from(ciphertext, "base64"),
          tag: Buffer.from(tag, "base64"),
        },
        `${agentId}/${name}`,
      ).toString("utf8");
    } catch {
      throw new Error(`the secret ${name} does not open with this SECRETS_KEY`);
    }
  }
}

/** The file in DATA_DIR that holds the generated key of a deployment that sets no SECRETS_KEY. */
export const SECRETS_KEY_FILE = "secrets.key";

/**
 * SECRETS_KEY when set; otherwise the key kept in `<dataDir>/secrets.key`, generated (mode 0600) on first start.
 * For the all-in-one server, whose embedded registry keeps its data in the same directory; a registry of its own
 * requires SECRETS_KEY.
 */
export function secretsKeyFor(options: { secretsKey?: string; dataDir: string; logger: Logger }): string {
  if (options.secretsKey) return options.secretsKey;
  const path = join(options.dataDir, SECRETS_KEY_FILE);
  mkdirSync(options.dataDir, { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString("base64")}\n`, { flag: "wx", mode: 0o600 });
    options.logger.warn(
      { path },
      "SECRETS_KEY is not set: agent secrets are sealed with a key generated into DATA_DIR; back it up with the " +
        "database, or set SECRETS_KEY to it",
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const key = readFileSync(path, "utf8").trim();
  if (!isSecretsKey(key)) throw new Error(`${path} does not hold the base64 of 32 bytes`);
  return key;
}
