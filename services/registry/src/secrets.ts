import { isSealingKey } from "@agentry/config";
import { openSealed, sealBytes } from "@agentry/core";

/**
 * How agent secrets are kept: each sealed with AES-256-GCM under SECRETS_KEY, bound to its agent and name so that
 * a sealed value copied onto another agent or name does not open. Stored form: `v1.<iv>.<ciphertext>.<tag>`.
 */
export class SecretVault {
  private readonly key: Buffer;

  constructor(keyBase64: string) {
    if (!isSealingKey(keyBase64)) throw new RangeError("SECRETS_KEY must be the base64 of 32 random bytes");
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
