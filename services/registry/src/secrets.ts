import { isSealingKey } from "@agentry/config";
import { MalformedSealedText, openSealedText, sealText } from "@agentry/core";

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
    return sealText(this.key, value, `${agentId}/${name}`);
  }

  /** The value of a stored form; throws (saying nothing of the value) when the key or binding is not its own. */
  open(agentId: string, name: string, stored: string): string {
    try {
      return openSealedText(this.key, stored, `${agentId}/${name}`);
    } catch (error) {
      if (error instanceof MalformedSealedText) throw new Error(`the stored secret ${name} is malformed`);
      throw new Error(`the secret ${name} does not open with this SECRETS_KEY`);
    }
  }
}
