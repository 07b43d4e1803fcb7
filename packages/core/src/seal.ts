import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** A plaintext sealed with AES-256-GCM: its random nonce, the ciphertext and the authentication tag. */
export interface Sealed {
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

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

/** Sealed bytes as one buffer, as stores keep them: nonce (12 bytes), tag (16 bytes), ciphertext. */
export function sealPacked(key: Buffer, plaintext: Buffer | string): Buffer {
  const { iv, tag, ciphertext } = sealBytes(key, plaintext);
  return Buffer.concat([iv, tag, ciphertext]);
}

/** The plaintext of `sealPacked`'s form; throws as `openSealed` does. */
export function openPacked(key: Buffer, packed: Uint8Array): Buffer {
  const bytes = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  return openSealed(key, {
    iv: bytes.subarray(0, IV_BYTES),
    tag: bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES),
    ciphertext: bytes.subarray(IV_BYTES + TAG_BYTES),
  });
}

/** The prefix of `sealText`'s form; a stored value without it was not sealed. */
export const SEALED_TEXT_PREFIX = "v1.";

/**
 * Text sealed as `sealBytes` does, in the form stores keep it: `v1.<iv>.<ciphertext>.<tag>`, each part base64.
 */
export function sealText(key: Buffer, plaintext: string, aad?: string): string {
  const { iv, ciphertext, tag } = sealBytes(key, plaintext, aad);
  return SEALED_TEXT_PREFIX + [iv, ciphertext, tag].map((part) => part.toString("base64")).join(".");
}

/**
 * The text of `sealText`'s form. Throws `MalformedSealedText` when it is not one, and the decipher's error when
 * the key, the aad or any byte is not the sealer's.
 */
export function openSealedText(key: Buffer, stored: string, aad?: string): string {
  const [version, iv, ciphertext, tag, ...rest] = stored.split(".");
  if (`${version}.` !== SEALED_TEXT_PREFIX || !iv || ciphertext === undefined || !tag || rest.length > 0) {
    throw new MalformedSealedText();
  }
  return openSealed(
    key,
    {
      iv: Buffer.from(iv, "base64"),
      ciphertext: Buffer.from(ciphertext, "base64"),
      tag: Buffer.from(tag, "base64"),
    },
    aad,
  ).toString("utf8");
}

export class MalformedSealedText extends Error {
  constructor() {
    super("the stored value is not in the sealed form v1.<iv>.<ciphertext>.<tag>");
  }
}
