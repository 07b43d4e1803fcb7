import { charCount, MEMORY_BOUNDS, newId } from "@agentry/core";
import type { JsonObject } from "@bufbuild/protobuf";
import type { MemoryRecord, NewMemory } from "./store/types.js";

/*
 * The rules of memories (docs/api/memories.md): what makes two the same, what a query matches, what the model is
 * asked after a turn and what of its answer is kept, and how the recalled ones read in the system prompt. The
 * stores only keep and search what these make.
 */

/** The most memories one turn's extraction stores: a turn rarely tells more, and a runaway answer costs little. */
export const MAX_MEMORIES_PER_TURN = 5;

/** The most memories recalled into one prompt: the user's most relevant to the message. */
export const MEMORIES_RECALLED = 5;

/** The known memories shown to the extraction, so that it does not restate them. */
export const KNOWN_MEMORIES_SHOWN = 20;

/** The most tokens the extraction's answer may take. */
export const EXTRACTION_MAX_TOKENS = 300;

/** The most words of a message a recall searches by: a long message's first words say what it is about. */
const MAX_SEARCH_WORDS = 32;

/** Whether the agent learns and recalls memories (`settings.memory`, default true). */
export function memoryEnabled(settings: JsonObject | undefined): boolean {
  return settings?.memory !== false;
}

/** The most memories the agent keeps per user (`settings.memoryLimit`), once its settings have been checked. */
export function memoryLimit(settings: JsonObject | undefined): number {
  const limit = settings?.memoryLimit;
  return typeof limit === "number" ? limit : MEMORY_BOUNDS.memoryLimit.default;
}

/**
 * The form two memories are compared in: lower case, letters and digits only, single spaces. "Likes tea." and
 * "likes  TEA" are the same memory.
 */
export function memoryKey(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/**
 * A memory ready to store: its text trimmed, or null when nothing of it is left or it is too long. A fact learnt
 * from a turn needs a letter or digit (a model's stray punctuation is no fact); one added by hand (no source) is
 * kept as written, its key then the text itself.
 */
export function newMemory(text: string, sourceMessageId: string | null, at = new Date()): NewMemory | null {
  const trimmed = text.trim().replace(/\s+/g, " ");
  const key = memoryKey(trimmed) || (sourceMessageId === null ? trimmed.normalize("NFKC").toLowerCase() : "");
  if (key === "" || charCount(trimmed) > MEMORY_BOUNDS.textMaxLength) return null;
  return { id: newId("memory"), text: trimmed, key, sourceMessageId, createdAt: at.toISOString() };
}

/**
 * Words that tell nothing of what a text is about. A query with them matches nearly every memory (each reads "The
 * user ..."), which costs a recall its time and ranks nothing; Postgres's `english` configuration drops the same
 * kind of words from its own queries.
 */
const STOP_WORDS = new Set(
  (
    "a about after again all am an and any are as at be because been before being but by can could did do does " +
    "doing for from had has have having he her here hers him his how i if in into is it its just me more most my " +
    "no nor not now of off on once only or other our ours out over own same she should so some such than that the " +
    "their them then there these they this those through to too under until up very was we were what when where " +
    "which while who whom why will with would you your yours user users"
  ).split(" "),
);

/**
 * The distinct words of a text a full-text search looks for, lower case, letters and digits only (safe to put in
 * either store's query syntax as they are), without `STOP_WORDS`.
 */
export function searchTerms(text: string, max = MAX_SEARCH_WORDS): string[] {
  const words = new Set<string>();
  for (const word of memoryKey(text).split(" ")) {
    if (word.length < 2 || STOP_WORDS.has(word)) continue;
    words.add(word);
    if (words.size === max) break;
  }
  return [...words];
}

/** The instructions of the extraction call. */
export const EXTRACTION_PROMPT = `You keep long-term memory about a user for an assistant.
Read the exchange below and list the durable facts it tells about the user: who they are, their preferences, their circumstances, their plans. Leave out what only matters for this exchange, what the assistant said about itself, and facts already known.
Write each fact as one short sentence in the third person ("The user ...").
Answer with JSON only, exactly of this form: {"facts": ["..."]}. Answer {"facts": []} when there is nothing new.`;

/** The extraction's one message: what is known already, then the exchange. */
export function extractionMessage(
  known: readonly MemoryRecord[],
  userText: string,
  replyText: string,
): string {
  const knownLines = known.map((memory) => `- ${memory.text}`).join("\n");
  return [
    `Facts already known:\n${knownLines || "(none)"}`,
    `User: ${userText}`,
    `Assistant: ${replyText}`,
  ].join("\n\n");
}

/**
 * The facts of the extraction's answer: the strings of its `facts` array (or of a bare array), from the first
 * JSON value in the text, so that a model that wraps it in prose or a code fence is still understood. Anything
 * else is no facts.
 */
export function parseFacts(answer: string): string[] {
  const start = answer.search(/[[{]/);
  if (start < 0) return [];
  const closer = answer[start] === "{" ? "}" : "]";
  for (let close = answer.lastIndexOf(closer); close > start; close = answer.lastIndexOf(closer, close - 1)) {
    let value: unknown;
    try {
      value = JSON.parse(answer.slice(start, close + 1));
    } catch {
      continue;
    }
    const facts = Array.isArray(value) ? value : (value as { facts?: unknown } | null)?.facts;
    if (!Array.isArray(facts)) return [];
    return facts.filter((fact): fact is string => typeof fact === "string");
  }
  return [];
}

/** The memories of an answer worth storing: well formed, new to `known`, distinct, at most `MAX_MEMORIES_PER_TURN`. */
export function newFacts(
  facts: readonly string[],
  known: readonly MemoryRecord[],
  sourceMessageId: string,
): NewMemory[] {
  const seen = new Set(known.map((memory) => memoryKey(memory.text)));
  const kept: NewMemory[] = [];
  for (const fact of facts) {
    const memory = newMemory(fact, sourceMessageId);
    if (!memory || seen.has(memory.key)) continue;
    seen.add(memory.key);
    kept.push(memory);
    if (kept.length === MAX_MEMORIES_PER_TURN) break;
  }
  return kept;
}

/** The recalled memories as a section of the system prompt; empty when there are none. */
export function memorySection(memories: readonly Pick<MemoryRecord, "text">[]): string {
  if (memories.length === 0) return "";
  const lines = memories.map((memory) => `- ${memory.text}`).join("\n");
  return `What you remember about this user from earlier conversations:\n${lines}`;
}

/**
 * How many of the best by each ranking a hybrid recall fuses: enough that a memory ranked well by one and poorly
 * by the other still places, few enough to stay cheap.
 */
export const RECALL_CANDIDATES = 20;

/** Reciprocal rank fusion's constant: 60, as in its paper (Cormack et al., 2009) and most search engines. */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion of rankings (full text, vector): each item scores the sum of 1 / (60 + its rank) in every
 * ranking it is in; the best `limit`, ties to the first ranking's order. One ranking alone keeps its order.
 */
export function fuseRankings<T extends { id: string }>(
  rankings: readonly (readonly T[])[],
  limit: number,
): T[] {
  const scores = new Map<string, { item: T; score: number; first: number }>();
  let position = 0;
  for (const ranking of rankings) {
    for (const [rank, item] of ranking.entries()) {
      const entry = scores.get(item.id);
      const score = 1 / (RRF_K + rank + 1);
      if (entry) entry.score += score;
      else scores.set(item.id, { item, score, first: position });
      position++;
    }
  }
  return [...scores.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .slice(0, limit)
    .map((entry) => entry.item);
}
