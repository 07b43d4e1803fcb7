import { createHash, randomBytes } from "node:crypto";

/**
 * API keys look like `agentry_sk_<32 base62 characters><6 base62 checksum characters>`. The body carries 190
 * bits of randomness; the checksum (CRC-32 of the body) lets secret scanners and the gateway reject a mistyped or
 * made-up key without a lookup. Only the SHA-256 of a key is ever stored.
 */
export const API_KEY_PREFIX = "agentry_sk_";

const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const WELL_FORMED = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

/** Every scope of this version, in the order listings show them. */
export const SCOPES = [
  "agents:read",
  "agents:write",
  "agents:delete",
  "messages:send",
  "keys:manage",
  "history:read",
  "history:delete",
  "usage:read",
  "webhooks:manage",
  "plugins:manage",
  "members:read",
  "members:write",
  "budgets:read",
  "budgets:write",
  "audit:read",
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * The grant of a full-access key (one created without scopes): every scope, including scopes added in later
 * versions. Kept as this marker rather than as the list of today's scopes, which would freeze the key at the
 * version that made it.
 */
export const FULL_ACCESS = "*";

/** What a key is granted: the scopes named when it was made, or full access. */
export type ScopeGrant = Scope[] | typeof FULL_ACCESS;

/** The scopes a grant holds in this version, in canonical order. */
export function grantedScopes(grant: ScopeGrant): Scope[] {
  return grant === FULL_ACCESS ? [...SCOPES] : SCOPES.filter((scope) => grant.includes(scope));
}

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function toBase62(value: number, length: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function checksum(body: string): string {
  return toBase62(crc32(body), CHECKSUM_LENGTH);
}

/** A new key: its secret (shown once), the SHA-256 to store, and the prefix to show in listings. */
export function generateApiKey(): { secret: string; sha256: string; prefix: string } {
  const body = randomBase62(BODY_LENGTH);
  const secret = `${API_KEY_PREFIX}${body}${checksum(body)}`;
  return { secret, sha256: sha256Hex(secret), prefix: secret.slice(0, API_KEY_PREFIX.length + 6) };
}

/** Whether a presented key has the right shape and checksum; a key that fails this cannot exist. */
export function isWellFormedApiKey(secret: string): boolean {
  if (!WELL_FORMED.test(secret)) return false;
  const body = secret.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + BODY_LENGTH);
  return secret.slice(API_KEY_PREFIX.length + BODY_LENGTH) === checksum(body);
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Whether `value` is a SHA-256 as `sha256Hex` writes it: 64 lowercase hex digits. */
export function isSha256Hex(value: string): boolean {
  return SHA256_HEX.test(value);
}
