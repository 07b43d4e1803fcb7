import { describe, expect, it } from "vitest";
import { charCount, exceedsCharacters, TRIMMED_SPACE } from "./characters.js";

describe("characters", () => {
  it("counts code points, not UTF-16 units", () => {
    expect(charCount("")).toBe(0);
    expect(charCount("a\u{1F600}b")).toBe(3);
    expect("a\u{1F600}b".length).toBe(4);
  });

  it("says whether a text has more characters than a bound", () => {
    expect(exceedsCharacters("\u{1F600}\u{1F600}", 2)).toBe(false);
    expect(exceedsCharacters("\u{1F600}\u{1F600}x", 2)).toBe(true);
    expect(exceedsCharacters("ab", 1)).toBe(true);
  });

  it("spells out exactly the characters trim removes", () => {
    const space = new RegExp(`^[${TRIMMED_SPACE}]$`);
    for (let code = 0; code <= 0xffff; code += 1) {
      const character = String.fromCharCode(code);
      expect(space.test(character), `U+${code.toString(16)}`).toBe(character.trim() === "");
    }
  });
});
