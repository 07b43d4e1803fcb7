import { charCount, TRIMMED_SPACE } from "@agentry/core";
import { z } from "zod";

/*
 * Strings as the agent record bounds them (docs/api/agents.md, "Fields and bounds"), with the JSON Schema patterns
 * that say the same: lengths in characters (code points), whitespace as `String.prototype.trim` removes it, and
 * never U+0000, which no store keeps as text.
 */

const CHAR = "[^\\u0000]";
const SOLID = `[^${TRIMMED_SPACE}\\u0000]`;
const SPACES = `[${TRIMMED_SPACE}]*`;

/** Any string without U+0000. */
export const NUL_FREE_PATTERN = "^[^\\u0000]*$";

const atMost = (max: number) => `must be at most ${max.toLocaleString("en-US")} characters`;

/** Text that is trimmed before it is checked and kept: 1 to `max` characters once trimmed. */
export function trimmedText(max: number) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
    .refine((value) => value.trim() !== "", "must not be empty")
    .refine((value) => charCount(value.trim()) <= max, atMost(max))
    .meta({ pattern: `^${SPACES}${SOLID}(?:${CHAR}{0,${max - 2}}${SOLID})?${SPACES}$` });
}

/** Text kept as sent, up to `max` characters, with at least one that is not whitespace. */
export function notBlankText(max: number) {
  return z
    .string({ error: "must be a string" })
    .refine((value) => charCount(value) <= max, atMost(max))
    .refine((value) => value.trim() !== "", "must not be empty")
    .meta({ maxLength: max, pattern: `^${CHAR}*${SOLID}${CHAR}*$` });
}

/** `["bio", 2, "x"]` → `bio[2].x`, the field notation of the error envelope's `details`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}
