import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { fitHistory } from "./history.js";
import type { PromptMessage } from "./providers/types.js";
import type { HistoryLimits } from "./store/types.js";

/** The parts of an agent the system prompt is built from (decisions.md, "Providers"). */
export interface AgentProfile {
  name: string;
  bio: string[];
  personality: JsonObject;
  knowledge: string[];
  goals: string[];
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
  /** Stored turns of this conversation, oldest first: at least those that fit the limits. */
  history: readonly PromptMessage[];
  text: string;
  /** What of the history the prompt may use; the system prompt and the new message are always sent whole. */
  historyLimits: HistoryLimits;
}

/**
 * The prompt of one call: the system prompt (profile, then this message's context), the history that fits the
 * limits (`fitHistory`), then the new message.
 */
export function buildPrompt(input: PromptInput): { system: string; messages: PromptMessage[] } {
  const system = [systemPrompt(input.profile), contextSection(input.context)].filter(Boolean).join("\n\n");
  const messages = fitHistory(input.history, input.historyLimits);
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
