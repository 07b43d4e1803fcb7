/*
 * Every bound on a text counts characters: Unicode code points, as JSON Schema's `minLength` and `maxLength` do, not
 * the UTF-16 units of `String.length` (an emoji is one character, not two).
 */

/**
 * The characters `String.prototype.trim` removes (ECMAScript WhiteSpace and LineTerminator), as the body of a
 * regular expression's class: the patterns that bound trimmed text spell them out, because `\s` means slightly
 * different sets in the regex dialects of JSON Schema tools.
 */
export const TRIMMED_SPACE =
  "\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";

/** The number of characters (code points) of a string. */
export function charCount(value: string): number {
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}

/** Whether a text has more than `max` characters (code points); counted only when its length allows it. */
export function exceedsCharacters(text: string, max: number): boolean {
  // A code point is one or two UTF-16 units: within `max` units it cannot have more than `max` code points.
  if (text.length <= max) return false;
  let characters = 0;
  for (const _ of text) if (++characters > max) return true;
  return false;
}
