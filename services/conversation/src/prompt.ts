import { type CharacterTraits, characterTraits, spokenByCharacter } from "@agentry/characters";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { knowledgeSection } from "./documents.js";
import { fitHistory, turnTokens } from "./history.js";
import { memorySection } from "./memories.js";
import type { PromptMessage } from "./providers/types.js";
import type { ChunkMatch, HistoryLimits } from "./store/types.js";

/** The parts of an agent the system prompt is built from (docs/api/providers.md, "System prompt"). */
export interface AgentProfile {
  name: string;
  bio: string[];
  personality: JsonObject;
  knowledge: string[];
  goals: string[];
}

/**
 * The most example conversations of a character (`personality.messageExamples`) one prompt shows. A few show
 * the voice and the shape of a reply; more cost tokens the history needs and steer little further.
 */
export const MAX_EXAMPLE_CONVERSATIONS = 4;

/**
 * The share of the history's token budget (`CONTEXT_TOKEN_BUDGET`) example conversations may take. They are
 * chosen first, so the history keeps the rest, at least three quarters: what was said in this conversation
 * matters more to the next reply than how the character talks in general, and an agent without examples keeps
 * the whole budget for its history.
 */
export const EXAMPLE_BUDGET_SHARE = 0.25;

/** The agent's profile as a system prompt; parts that are empty are left out. */
export function systemPrompt(profile: AgentProfile, exampleMessages = 0): string {
  const traits = characterTraits(profile.personality);
  const sections: string[] = [];
  const name = profile.name.trim();
  const system = traits.system ? withAgentName(traits.system, name).trim() : "";
  if (system) sections.push(system);
  else if (name) sections.push(`You are ${name}. Stay in character and answer as ${name}.`);
  const bio = bullets(profile.bio);
  if (bio) sections.push(`About you:\n${bio}`);
  const lore = bullets(traits.lore);
  if (lore) sections.push(`Your background:\n${lore}`);
  const adjectives = inline(traits.adjectives);
  if (adjectives) sections.push(`You are ${adjectives}.`);
  const topics = inline(traits.topics);
  if (topics) sections.push(`Topics you know well and like to talk about: ${topics}.`);
  const personality = personalityLines(profile.personality, traits);
  if (personality) sections.push(`Your personality and communication style:\n${personality}`);
  const guidelines = bullets(traits.guidelines);
  if (guidelines) sections.push(`How you write your replies:\n${guidelines}`);
  const knowledge = bullets(profile.knowledge);
  if (knowledge) sections.push(`Your areas of knowledge:\n${knowledge}`);
  const goals = bullets(profile.goals);
  if (goals) sections.push(`Your goals:\n${goals}`);
  if (exampleMessages > 0) {
    sections.push(
      `The first ${exampleMessages} messages below are example conversations that show how you talk; they are not part of this conversation.`,
    );
  }
  return sections.join("\n\n");
}

/** The caller's context of this one message, as extra system context; empty when there is none. */
export function contextSection(context: JsonObject | undefined): string {
  if (!context || Object.keys(context).length === 0) return "";
  return `Context supplied with this message (JSON; it applies to this message only):\n${JSON.stringify(context)}`;
}

/**
 * The character's example conversations as turns of the prompt, within `tokenBudget` (each message costed as a
 * turn of history is): in the file's order, whole conversations only, at most `MAX_EXAMPLE_CONVERSATIONS`; one
 * that does not fit is passed over for a shorter one after it. Each starts with the other party and ends with
 * the character, and turns alternate, as providers require and as the history that follows expects.
 */
export function exampleTurns(profile: AgentProfile, tokenBudget: number): PromptMessage[] {
  const turns: PromptMessage[] = [];
  let tokens = 0;
  let conversations = 0;
  for (const conversation of characterTraits(profile.personality).examples) {
    if (conversations === MAX_EXAMPLE_CONVERSATIONS) break;
    const messages = alternating(
      conversation.map((line) => ({
        role: spokenByCharacter(line.speaker, conversation, profile.name) ? "assistant" : "user",
        text: withAgentName(line.text, profile.name.trim()),
      })),
    );
    const cost = messages.reduce((sum, message) => sum + turnTokens(message.text), 0);
    if (messages.length === 0 || tokens + cost > tokenBudget) continue;
    turns.push(...messages);
    tokens += cost;
    conversations += 1;
  }
  return turns;
}

export interface PromptInput {
  profile: AgentProfile;
  context: JsonObject | undefined;
  /** Stored turns of this conversation, oldest first: at least those that fit the limits. */
  history: readonly PromptMessage[];
  text: string;
  /** What the agent remembers of this user that bears on the message (memories.ts); none: no section. */
  memories?: readonly { text: string }[];
  /** The chunks of the agent's documents that bear on the message, best first (documents.ts); none: no section. */
  passages?: readonly ChunkMatch[];
  /**
   * What of the budget the prompt may spend on the character's example conversations and the history together;
   * the system prompt and the new message are always sent whole.
   */
  historyLimits: HistoryLimits;
}

/**
 * The prompt of one call: the system prompt (profile, then what is remembered of the user, then the passages of
 * the agent's documents, then this message's context), the character's example conversations (`exampleTurns`, within `EXAMPLE_BUDGET_SHARE` of the budget),
 * the history that fits what they leave (`fitHistory`), then the new message.
 */
export function buildPrompt(input: PromptInput): { system: string; messages: PromptMessage[] } {
  const { maxTurns, tokenBudget } = input.historyLimits;
  const examples = exampleTurns(input.profile, Math.floor(tokenBudget * EXAMPLE_BUDGET_SHARE));
  const spent = examples.reduce((sum, message) => sum + turnTokens(message.text), 0);
  const system = [
    systemPrompt(input.profile, examples.length),
    memorySection(input.memories ?? []),
    knowledgeSection(input.passages ?? []),
    contextSection(input.context),
  ]
    .filter(Boolean)
    .join("\n\n");
  const messages = [
    ...examples,
    ...fitHistory(input.history, { maxTurns, tokenBudget: tokenBudget - spent }),
  ];
  messages.push({ role: "user", text: input.text });
  return { system, messages };
}

/** Messages merged where one speaker speaks twice, cut to start with the other party and end with the character. */
function alternating(messages: readonly PromptMessage[]): PromptMessage[] {
  const merged: PromptMessage[] = [];
  for (const message of messages) {
    const last = merged.at(-1);
    if (last?.role === message.role) last.text = `${last.text}\n${message.text}`;
    else if (last !== undefined || message.role === "user") merged.push({ ...message });
  }
  if (merged.at(-1)?.role === "user") merged.pop();
  return merged;
}

/** elizaOS files name the character `{{agentName}}` in texts meant for any character. */
function withAgentName(text: string, name: string): string {
  return name ? text.replace(/\{\{\s*agentName\s*\}\}/g, name) : text;
}

function bullets(items: readonly string[]): string {
  return items
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => `- ${item}`)
    .join("\n");
}

function inline(items: readonly string[]): string {
  return items
    .map((item) => item.trim())
    .filter(Boolean)
    .join(", ");
}

/** The personality's own traits: every key but the character fields `characterTraits` reads (or sets aside). */
function personalityLines(personality: JsonObject, traits: CharacterTraits): string {
  return traits.plain
    .map((key) => [key, personality[key]!] as const)
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

/** A conversation the caller supplies in place of the stored one (the OpenAI-compatible chat completions route). */
export interface SuppliedContext {
  /** The caller's own instructions, added after the agent's system prompt. */
  system: string;
  /** What was said before the new message, oldest first. */
  messages: readonly PromptMessage[];
}

/**
 * The prompt of a message that brings its whole conversation: the agent's system prompt with what it recalls
 * (the user's memories, its documents' passages), then the caller's instructions, then the caller's messages and
 * the new one, as given. No stored history is added: the caller owns the conversation. Two messages in a row from
 * one speaker are joined, since providers require turns to alternate.
 */
export function suppliedPrompt(
  profile: AgentProfile,
  supplied: SuppliedContext,
  text: string,
  recalled: { memories?: readonly { text: string }[]; passages?: readonly ChunkMatch[] } = {},
): { system: string; messages: PromptMessage[] } {
  const system = [
    systemPrompt(profile),
    memorySection(recalled.memories ?? []),
    knowledgeSection(recalled.passages ?? []),
    supplied.system.trim(),
  ]
    .filter(Boolean)
    .join("\n\n");
  const messages: PromptMessage[] = [];
  for (const message of [...supplied.messages, { role: "user" as const, text }]) {
    const last = messages.at(-1);
    if (last?.role === message.role) last.text = `${last.text}\n\n${message.text}`;
    else messages.push({ role: message.role, text: message.text });
  }
  return { system, messages };
}
