/** The longest message each platform takes, in characters. */
export const MESSAGE_LIMITS = { telegram: 4096, discord: 2000, slack: 3000 } as const;

/**
 * Splits a reply into messages of at most `limit` characters, cutting at the last paragraph break that fits,
 * else the last sentence end, else the last space, and only then mid-word; pieces keep their text in order.
 */
export function splitReply(text: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = text.trim();
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1);
    const cut =
      lastBreak(window, /\n\s*\n/g) ?? lastBreak(window, /[.!?…](?=\s)/g, 1) ?? lastBreak(window, /\s/g);
    const at = cut !== undefined && cut > 0 && cut <= limit ? cut : limit;
    pieces.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).trimStart();
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

/** Where the last match of `pattern` in `window` begins (plus `after`), if any lies past the first quarter. */
function lastBreak(window: string, pattern: RegExp, after = 0): number | undefined {
  let found: number | undefined;
  for (const match of window.matchAll(pattern)) {
    const at = match.index + after;
    // A break in the first quarter would make a uselessly short message; a later, coarser break is better.
    if (at >= window.length / 4 && at < window.length) found = at;
  }
  return found;
}
