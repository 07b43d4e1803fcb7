/*
 * Every bound on a text counts characters: Unicode code points, as JSON Schema's `minLength` and `maxLength` do, not
 * the UTF-16 units of `String.length` (an emoji is one character, not two).
 */

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
