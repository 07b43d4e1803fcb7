import { describe, expect, it } from "vitest";
import { deepFrozen } from "./frozen.js";

describe("deepFrozen", () => {
  it("makes a value and everything in it read-only, and returns the same value", () => {
    const value = { list: [1, { deep: "text" }], nested: { inner: [] as string[] }, none: null };
    const frozen = deepFrozen(value);
    expect(frozen).toBe(value);
    expect(() => frozen.list.push(2)).toThrow(TypeError);
    expect(() => {
      (frozen.list[1] as { deep: string }).deep = "changed";
    }).toThrow(TypeError);
    expect(() => frozen.nested.inner.push("x")).toThrow(TypeError);
    expect(value).toEqual({ list: [1, { deep: "text" }], nested: { inner: [] }, none: null });
  });

  it("leaves primitives as they are", () => {
    expect(deepFrozen("text")).toBe("text");
    expect(deepFrozen(null)).toBeNull();
  });
});
