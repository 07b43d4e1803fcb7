import { describe, expect, it } from "vitest";
import { modelToolName } from "./tools.js";

describe("modelToolName", () => {
  it("is <plugin>__<tool> when that fits the providers' 64 characters", () => {
    expect(modelToolName("time", "now")).toBe("time__now");
    const longest = modelToolName("p".repeat(14), "t".repeat(48));
    expect(longest).toBe(`${"p".repeat(14)}__${"t".repeat(48)}`);
  });

  it("keeps a longer name's start and ends it with a hash of the whole, distinct and within bounds", () => {
    const a = modelToolName("p".repeat(32), `${"t".repeat(47)}a`);
    const b = modelToolName("p".repeat(32), `${"t".repeat(47)}b`);
    expect(a).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(a.startsWith(`${"p".repeat(32)}__`)).toBe(true);
    expect(a).not.toBe(b);
  });
});
