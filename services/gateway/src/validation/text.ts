import { charCount, TRIMMED_SPACE } from "@agentry/core";
import { z } from "zod";
import { NUL_FREE_PATTERN } from "../http/body.js";

/*
 * Strings of request bodies, validated so that the OpenAPI document can state exactly what is accepted:
 * - lengths count characters (Unicode code points), as JSON Schema's `minLength` and `maxLength` do, not the
 *   UTF-16 units of `String.length` (an emoji is one character, not two);
 * - whitespace is what `String.prototype.trim` removes, spelled out in the patterns, because `\s` and `\S` mean
 *   slightly different sets in the regex dialects of JSON Schema tools (JavaScript, Python, Rust);
 * - every pattern refuses U+0000, which `readJsonBody` refuses anywhere in a body.
 */

const CHAR = "[^\\u0000]";
const SOLID = `[^${TRIMMED_SPACE}\\u0000]`;
const SPACES = `[${TRIMMED_SPACE}]*`;

/** The number of characters (code points) of a string, as every bound counts them; the whitespace `trim` removes. */
export { charCount, TRIMMED_SPACE };

/** A string whose trimmed value has `min` (0 or 1) to `max` characters, any whitespace around it, no NUL. */
export function trimmedPattern(min: 0 | 1, max: number): string {
  const trimmed = `${SOLID}(?:${CHAR}{0,${max - 2}}${SOLID})?`;
  return `^${SPACES}${min === 0 ? `(?:${trimmed})?` : trimmed}${SPACES}$`;
}

/** A string with at least one character that is not whitespace, and no NUL. */
export const NOT_BLANK_PATTERN = `^${CHAR}*${SOLID}${CHAR}*$`;

const atMost = (max: number) => `must be at most ${max} characters`;

/**
 * Text that is trimmed before it is checked and stored: `min` (0 or 1) to `max` characters once trimmed. Its
 * document has no `maxLength`, which would count the whitespace around it; the pattern says it all.
 */
export function trimmedText(min: 0 | 1, max: number) {
  return z
    .string({ error: "must be a string" })
    .trim()
    .refine((value) => value.length >= min, "must not be empty")
    .refine((value) => charCount(value) <= max, atMost(max))
    .meta({ pattern: trimmedPattern(min, max) });
}

/** Text kept as sent, up to `max` characters, with at least one that is not whitespace. */
export function notBlankText(max: number) {
  return z
    .string({ error: "must be a string" })
    .refine((value) => charCount(value) <= max, atMost(max))
    .refine((value) => value.trim() !== "", "must not be empty")
    .meta({ maxLength: max, pattern: NOT_BLANK_PATTERN });
}

/** Text kept as sent, `min` to `max` characters; `empty` is the issue of an empty one. */
export function plainText(min: number, max: number, empty = "must not be empty") {
  return z
    .string({ error: "must be a string" })
    .refine((value) => value.length >= min, empty)
    .refine((value) => charCount(value) <= max, atMost(max))
    .meta({ minLength: min, maxLength: max, pattern: NUL_FREE_PATTERN });
}
