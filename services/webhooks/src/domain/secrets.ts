import { openSealedText, SEALED_TEXT_PREFIX, sealText } from "@agentry/core";

/**
 * How endpoint secrets are kept. They must be kept whole, since deliveries are signed with them. With a key
 * (WEBHOOK_SECRETS_KEY: the base64 of 32 bytes) each is sealed with AES-256-GCM, bound to its endpoint's id so
 * that a sealed secret copied onto another endpoint does not open; without one they are stored as they are, and
 * the service says so when it starts. A store may hold both kinds: secrets written before a key was configured
 * stay readable, and are sealed when next rotated.
 */
export class SecretBox {
  private readonly key: Buffer | undefined;

  constructor(keyBase64?: string) {
    if (keyBase64 === undefined) return;
    const key = Buffer.from(keyBase64, "base64");
    if (key.length !== 32) throw new RangeError("must be the base64 of 32 random bytes");
    this.key = key;
  }

  get encrypts(): boolean {
    return this.key !== undefined;
  }

  /** The stored form of a secret: `v1.<iv>.<ciphertext>.<tag>` (base64) with a key, the secret itself without. */
  seal(endpointId: string, secret: string): string {
    return this.key ? sealText(this.key, secret, endpointId) : secret;
  }

  /** The secret of a stored form; throws when it is sealed and this box has no key, or the wrong one. */
  open(endpointId: string, stored: string): string {
    if (!stored.startsWith(SEALED_TEXT_PREFIX)) return stored;
    if (!this.key) throw new Error("the secret is encrypted and WEBHOOK_SECRETS_KEY is not configured");
    return openSealedText(this.key, stored, endpointId);
  }
}
