import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** A plaintext sealed with AES-256-GCM: its random nonce, the ciphertext and the authentication tag. */
export interface Sealed {
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

const IV_BYTES = 12;

/**
 * Seals bytes with AES-256-GCM under a 32-byte key and a fresh random nonce. `aad`, when given, is bound to the
 * result without being stored in it: opening needs the same (an owner's id, so that a sealed value copied onto
 * another owner does not open).
 */
export function sealBytes(key: Buffer, plaintext: Buffer | string, aad?: string): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

/** The plaintext of `sealBytes`; throws when the key, the aad or any byte of it is not the sealer's. */
export function openSealed(key: Buffer, sealed: Sealed, aad?: string): Buffer {
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.iv);
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
}
