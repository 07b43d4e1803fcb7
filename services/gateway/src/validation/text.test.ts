import { describe, expect, it } from "vitest";
import { NUL_FREE_PATTERN } from "../http/body.js";
import {
  charCount,
  NOT_BLANK_PATTERN,
  notBlankText,
  plainText,
  TRIMMED_SPACE,
  trimmedPattern,
  trimmedText,
} from "./text.js";

/** Patterns are read with the `u` flag, as JSON Schema validators read them (code points, not UTF-16 units). */
const matches = (pattern: string, value: string) => new RegExp(pattern, "u").test(value);

/** A deterministic mix of the characters that make the rules differ: whitespace of every kind, astral, NUL. */
function* samples(): Generator<string> {
  const alphabet = [
    "a",
    " ",
    "\t",
    "\n",
    "\u00a0",
    "\u2028",
    "\ufeff",
    "\u001c",
    "\u0085",
    "\u{1F600}",
    "\u0000",
  ];
  let seed = 7;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed;
  };
  for (let i = 0; i < 3000; i++) {
    const length = next() % 9;
    let value = "";
    for (let j = 0; j < length; j++) value += alphabet[next() % alphabet.length];
    yield value;
  }
}

describe("request text", () => {
  it("spells out exactly the whitespace String.prototype.trim removes", () => {
    const space = new RegExp(`^[${TRIMMED_SPACE}]$`, "u");
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (space.test(char) !== (char.trim() === "")) throw new Error(`U+${code.toString(16)} disagrees`);
    }
  });

  it("counts characters as code points", () => {
    expect(charCount("a\u{1F600}b")).toBe(3);
    expect("a\u{1F600}b".length).toBe(4);
  });

  it("has patterns that accept exactly what the validation accepts (NUL apart, refused earlier)", () => {
    const rules = [
      { schema: trimmedText(1, 4), pattern: trimmedPattern(1, 4) },
      { schema: trimmedText(0, 4), pattern: trimmedPattern(0, 4) },
      { schema: notBlankText(4), pattern: NOT_BLANK_PATTERN, maxLength: 4 },
      { schema: plainText(1, 4), pattern: NUL_FREE_PATTERN, minLength: 1, maxLength: 4 },
    ];
    for (const value of samples()) {
      for (const { schema, pattern, minLength = 0, maxLength = Number.POSITIVE_INFINITY } of rules) {
        const length = charCount(value);
        const documented = matches(pattern, value) && length >= minLength && length <= maxLength;
        const accepted = schema.safeParse(value).success && !value.includes("\u0000");
        if (documented !== accepted) throw new Error(`${JSON.stringify(value)} against ${pattern}`);
      }
    }
  });

  it("refuses NUL in every pattern", () => {
    for (const pattern of [
      trimmedPattern(1, 200),
      trimmedPattern(0, 200),
      NOT_BLANK_PATTERN,
      NUL_FREE_PATTERN,
    ]) {
      expect(matches(pattern, "ab\u0000c")).toBe(false);
      expect(matches(pattern, "abc")).toBe(true);
    }
  });
});
