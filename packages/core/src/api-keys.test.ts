import { describe, expect, it } from "vitest";
import {
  API_KEY_PREFIX,
  FULL_ACCESS,
  generateApiKey,
  grantedScopes,
  isWellFormedApiKey,
  SCOPES,
  sha256Hex,
} from "./api-keys.js";

describe("API keys", () => {
  it("generates well-formed, distinct keys whose stored form is their SHA-256", () => {
    const keys = Array.from({ length: 200 }, () => generateApiKey());
    for (const key of keys) {
      expect(key.secret.startsWith(API_KEY_PREFIX)).toBe(true);
      expect(key.secret).toHaveLength(API_KEY_PREFIX.length + 38);
      expect(isWellFormedApiKey(key.secret)).toBe(true);
      expect(key.sha256).toBe(sha256Hex(key.secret));
      expect(key.secret.startsWith(key.prefix)).toBe(true);
      expect(key.prefix.length).toBeLessThan(key.secret.length / 2);
    }
    expect(new Set(keys.map((key) => key.secret)).size).toBe(keys.length);
  });

  it("rejects any single-character change through the checksum", () => {
    const { secret } = generateApiKey();
    const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (let i = API_KEY_PREFIX.length; i < secret.length; i++) {
      const replacement = alphabet[(alphabet.indexOf(secret[i]!) + 17) % alphabet.length]!;
      expect(isWellFormedApiKey(secret.slice(0, i) + replacement + secret.slice(i + 1))).toBe(false);
    }
  });

  it("rejects wrong prefixes, lengths and characters", () => {
    const { secret } = generateApiKey();
    expect(isWellFormedApiKey(secret.replace(API_KEY_PREFIX, "agentry_pk_"))).toBe(false);
    expect(isWellFormedApiKey(secret.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(`${secret}0`)).toBe(false);
    expect(isWellFormedApiKey(`${secret.slice(0, -2)}-_`)).toBe(false);
    expect(isWellFormedApiKey("")).toBe(false);
  });
});

describe("scope grants", () => {
  it("gives full access every scope of this version, and an explicit grant only its own, in canonical order", () => {
    expect(grantedScopes(FULL_ACCESS)).toEqual([...SCOPES]);
    expect(grantedScopes(["history:read", "agents:read"])).toEqual(["agents:read", "history:read"]);
    expect(grantedScopes([])).toEqual([]);
  });
});
