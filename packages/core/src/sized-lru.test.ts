import { describe, expect, it } from "vitest";
import { SizedLru } from "./sized-lru.js";

describe("SizedLru", () => {
  it("drops the least recently used entries beyond its size", () => {
    const lru = new SizedLru<string, number>(10);
    lru.set("a", 1, 4);
    lru.set("b", 2, 4);
    expect(lru.get("a")).toBe(1);
    lru.set("c", 3, 4);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe(1);
    expect(lru.get("c")).toBe(3);
  });

  it("counts a replaced entry's new size, not both", () => {
    const lru = new SizedLru<string, number>(10);
    lru.set("a", 1, 6);
    lru.set("a", 2, 6);
    lru.set("b", 3, 4);
    expect(lru.get("a")).toBe(2);
    expect(lru.get("b")).toBe(3);
  });

  it("keeps nothing larger than its whole size, and forgets on delete and clear", () => {
    const lru = new SizedLru<string, number>(10);
    lru.set("big", 1, 11);
    expect(lru.get("big")).toBeUndefined();
    lru.set("a", 1, 5);
    lru.set("b", 2, 5);
    lru.delete("a");
    lru.set("c", 3, 5);
    expect(lru.get("b")).toBe(2);
    lru.clear();
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("c")).toBeUndefined();
    lru.set("d", 4, 10);
    expect(lru.get("d")).toBe(4);
  });
});
