import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  MalformedSealedText,
  openPacked,
  openSealed,
  openSealedText,
  sealBytes,
  sealPacked,
  sealText,
} from "./seal.js";

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

describe("sealPacked", () => {
  it("keeps nonce, tag and ciphertext in one buffer, and opens it only with its key", () => {
    const key = randomBytes(32);
    const packed = sealPacked(key, "the agent as created");
    expect(packed.length).toBe(12 + 16 + "the agent as created".length);
    expect(packed.toString("latin1")).not.toContain("agent");
    // A view into a larger buffer, as a store hands a column back.
    const view = new Uint8Array(Buffer.concat([Buffer.from("xx"), packed])).subarray(2);
    expect(openPacked(key, view).toString("utf8")).toBe("the agent as created");
    expect(() => openPacked(randomBytes(32), packed)).toThrow();
  });
});

describe("sealText", () => {
  it("keeps the sealed form v1.<iv>.<ciphertext>.<tag> and opens it only with its key and aad", () => {
    const key = randomBytes(32);
    const stored = sealText(key, "whsec_value", "ep_1");
    expect(stored).toMatch(/^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]*\.[A-Za-z0-9+/=]+$/);
    expect(stored).not.toContain("whsec_value");
    expect(openSealedText(key, stored, "ep_1")).toBe("whsec_value");
    expect(() => openSealedText(key, stored, "ep_2")).toThrow();
    expect(() => openSealedText(randomBytes(32), stored, "ep_1")).toThrow();
  });

  it("refuses what is not in the form", () => {
    const key = randomBytes(32);
    for (const bad of ["whsec_plain", "v2.a.b.c", "v1.a.b", "v1.a.b.c.d"]) {
      expect(() => openSealedText(key, bad)).toThrow(MalformedSealedText);
    }
  });
});
