import { describe, expect, it } from "vitest";
import { SecretBox } from "./secrets.js";

const KEY = Buffer.alloc(32, 1).toString("base64");

describe("SecretBox", () => {
  it("keeps secrets as they are without a key", () => {
    const box = new SecretBox();
    expect(box.encrypts).toBe(false);
    expect(box.seal("whk_1", "whsec_abc")).toBe("whsec_abc");
    expect(box.open("whk_1", "whsec_abc")).toBe("whsec_abc");
  });

  it("seals with a key, each time differently, bound to the endpoint", () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal("whk_1", "whsec_abc");
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain("abc");
    expect(box.seal("whk_1", "whsec_abc")).not.toBe(sealed);
    expect(box.open("whk_1", sealed)).toBe("whsec_abc");
    expect(() => box.open("whk_2", sealed)).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 2).toString("base64")).open("whk_1", sealed)).toThrow();
    expect(() => new SecretBox().open("whk_1", sealed)).toThrow(/WEBHOOK_SECRETS_KEY/);
    // Secrets stored before a key was configured stay readable.
    expect(box.open("whk_1", "whsec_plain")).toBe("whsec_plain");
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => new SecretBox(Buffer.alloc(16).toString("base64"))).toThrow(RangeError);
  });
});
