import { describe, expect, it } from "vitest";
import { splitReply } from "./split.js";

describe("splitReply", () => {
  it("keeps a short reply whole", () => {
    expect(splitReply("Hello there.", 4096)).toEqual(["Hello there."]);
  });

  it("cuts at a paragraph break that fits", () => {
    const first = "a".repeat(60);
    const second = "b".repeat(60);
    expect(splitReply(`${first}\n\n${second}`, 100)).toEqual([first, second]);
  });

  it("cuts at a sentence end when no paragraph break fits", () => {
    const text = `${"Word ".repeat(10).trim()}. ${"Next ".repeat(15).trim()}.`;
    const pieces = splitReply(text, 80);
    expect(pieces[0]?.endsWith(".")).toBe(true);
    expect(pieces.every((piece) => piece.length <= 80)).toBe(true);
    expect(pieces.join(" ")).toBe(text);
  });

  it("cuts a word longer than the limit where it must", () => {
    const pieces = splitReply("x".repeat(250), 100);
    expect(pieces.map((piece) => piece.length)).toEqual([100, 100, 50]);
  });
});
