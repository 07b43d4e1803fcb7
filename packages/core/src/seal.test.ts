import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openSealed, sealBytes } from "./seal.js";

describe("sealBytes", () => {
  const key = randomBytes(32);

  it("opens what it sealed, with a new nonce each time", () => {
    const first = sealBytes(key, "agentry_sk_secret", "owner");
    const second = sealBytes(key, "agentry_sk_secret", "owner");
    expect(first.iv.equals(second.iv)).toBe(false);
    expect(first.ciphertext.toString("utf8")).not.toContain("secret");
    expect(openSealed(key, first, "owner").toString("utf8")).toBe("agentry_sk_secret");
  });

  it("refuses another key, another aad, and any changed byte", () => {
    const sealed = sealBytes(key, "payload", "owner");
    expect(() => openSealed(randomBytes(32), sealed, "owner")).toThrow();
    expect(() => openSealed(key, sealed, "someone else")).toThrow();
    const tampered = { ...sealed, ciphertext: Buffer.from(sealed.ciphertext) };
    tampered.ciphertext[0]! ^= 1;
    expect(() => openSealed(key, tampered, "owner")).toThrow();
  });
});
