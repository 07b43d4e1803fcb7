/** The most words of a query a search looks for; the rest are ignored. */
const MAX_WORDS = 32;

/**
 * The words of a knowledge search as a user typed it (not a query language): runs of letters and digits,
 * lowercased, each once, in order. Stores look for entries holding any of them, best matches first.
 */
export function searchWords(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_WORDS);
}

/** An FTS5 query matching any of the words within one agent's entries (each word quoted, so none is syntax). */
export function fts5Query(agentId: string, words: readonly string[]): string {
  return `agent_id : "${agentId}" AND text : (${words.map((word) => `"${word}"`).join(" OR ")})`;
}

/** A Postgres tsquery text matching any of the words (each quoted, so none is syntax). */
export function tsQuery(words: readonly string[]): string {
  return words.map((word) => `'${word}'`).join(" | ");
}
