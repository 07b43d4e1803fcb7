import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { PromptMessage } from "./providers/types.js";

/** The parts of an agent the system prompt is built from (decisions.md, "Providers"). */
export interface AgentProfile {
  name: string;
  bio: string[];
  personality: JsonObject;
  knowledge: string[];
  goals: string[];
}

/** The history read from the store for one prompt, before the token budget trims it. */
export const MAX_HISTORY_TURNS = 200;

/** Per-message overhead of the chat formats (role markers, separators), in tokens. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * A rough token count, about four characters per token for English text. It only decides how much history
 * fits the budget, so being approximate costs a turn more or less of context, never a failed call.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** What one turn of history costs the budget: its text and the chat format's overhead. */
export function turnTokens(text: string): number {
  return estimateTokens(text) + MESSAGE_OVERHEAD_TOKENS;
}

/** The agent's profile as a system prompt; parts that are empty are left out. */
export function systemPrompt(profile: AgentProfile): string {
  const sections: string[] = [];
  const name = profile.name.trim();
  if (name) sections.push(`You are ${name}. Stay in character and answer as ${name}.`);
  const bio = bullets(profile.bio);
  if (bio) sections.push(`About you:\n${bio}`);
  const personality = personalityLines(profile.personality);
  if (personality) sections.push(`Your personality and communication style:\n${personality}`);
  const knowledge = bullets(profile.knowledge);
  if (knowledge) sections.push(`Your areas of knowledge:\n${knowledge}`);
  const goals = bullets(profile.goals);
  if (goals) sections.push(`Your goals:\n${goals}`);
  return sections.join("\n\n");
}

/** The caller's context of this one message, as extra system context; empty when there is none. */
export function contextSection(context: JsonObject | undefined): string {
  if (!context || Object.keys(context).length === 0) return "";
  return `Context supplied with this message (JSON; it applies to this message only):\n${JSON.stringify(context)}`;
}

export interface PromptInput {
  profile: AgentProfile;
  context: JsonObject | undefined;
  /** Stored turns of this conversation, oldest first: at least those that fit the budget. */
  history: readonly PromptMessage[];
  text: string;
  /** Tokens the history may take; the system prompt and the new message are always sent whole. */
  historyTokenBudget: number;
}

/**
 * The prompt of one call: the system prompt (profile, then this message's context), the most recent turns that
 * fit the budget, then the new message. History is cut at a turn boundary and never starts with a reply, since
 * some providers require the first message to be the user's.
 */
export function buildPrompt(input: PromptInput): { system: string; messages: PromptMessage[] } {
  const system = [systemPrompt(input.profile), contextSection(input.context)].filter(Boolean).join("\n\n");
  const history = input.history;
  let start = history.length;
  let spent = 0;
  while (start > 0) {
    const cost = turnTokens(history[start - 1]!.text);
    if (spent + cost > input.historyTokenBudget) break;
    spent += cost;
    start--;
  }
  while (history[start]?.role === "assistant") start++;
  const messages = history.slice(start);
  messages.push({ role: "user", text: input.text });
  return { system, messages };
}

function bullets(items: readonly string[]): string {
  return items
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => `- ${item}`)
    .join("\n");
}

function personalityLines(personality: JsonObject): string {
  return Object.entries(personality)
    .filter(([, value]) => !isEmpty(value))
    .map(([key, value]) => `- ${key}: ${render(value)}`)
    .join("\n");
}

function render(value: JsonValue): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null))
    return value.join(", ");
  return JSON.stringify(value);
}

function isEmpty(value: JsonValue): boolean {
  if (value === null) return true;
  if (typeof value === "string") return value.trim() === "";
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}
