import { exceedsCharacters } from "./characters.js";

/**
 * Rules of the agent and message contract (docs/api/agents.md, "Fields and bounds"; docs/api/providers.md), held once
 * for everything that enforces or documents them: the gateway's validation and OpenAPI document, the registry,
 * and the conversation service.
 */

/** The model providers an agent can name in `modelProvider`. `local` is the in-process model. */
export const PROVIDER_NAMES = ["openai", "anthropic", "local"] as const;

export type ProviderName = (typeof PROVIDER_NAMES)[number];

export function isProviderName(value: string): value is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(value);
}

/**
 * What a deployment sets so that a provider is configured there (docs/api/providers.md, "Choosing a provider and
 * model"): named in the warning of a write naming an unconfigured provider and in the MODEL_ERROR of a message to
 * such an agent.
 */
export const PROVIDER_SETUP: Record<ProviderName, string> = {
  openai:
    "OPENAI_API_KEY (or OPENAI_BASE_URL, for an OpenAI-compatible server such as Ollama, vLLM or LM Studio)",
  anthropic: "ANTHROPIC_API_KEY",
  local: "LOCAL_ENABLED=true (or leave LOCAL_ENABLED unset)",
};

/** The warning of an agent write whose `modelProvider` is one this deployment has no configuration for. */
export function unconfiguredProviderIssue(name: ProviderName): string {
  return `${name} is not configured on this server: the agent is kept, and its messages fail with MODEL_ERROR until ${PROVIDER_SETUP[name]} is set`;
}

/** Bounds of an agent's fields. */
export const AGENT_BOUNDS = {
  /** Characters once surrounding whitespace is trimmed. */
  nameMaxLength: 200,
  arrayMaxItems: 100,
  stringItemMaxLength: 10_000,
  modelMaxLength: 200,
} as const;

/** Bounds of a message request. `text` is counted in characters (code points), at least one. */
export const MESSAGE_BOUNDS = {
  textMaxLength: 100_000,
  idMaxLength: 256,
} as const;

/**
 * Agent `settings` that tune generation, and their bounds:
 * - `settings.temperature`: number from 0 to 2 inclusive; unset leaves the provider's default.
 * - `settings.maxTokens`: integer from 1 to 8192 inclusive, the most tokens a reply may have; default 1024 (the
 *   local model has its own, lower default: LOCAL_MAX_TOKENS).
 * - `settings.fallbacks`: the models to answer with when the agent's own fails (`fallbackIssues`).
 * - `settings.maxToolSteps`: rounds of tool calls in one turn; `settings.toolChoice`: whether the first must call one.
 * - `settings.memory`: boolean, whether the agent learns and recalls memories of its users (default true);
 *   `settings.memoryLimit`: the most memories kept per user (`MEMORY_BOUNDS`), the oldest evicted beyond it.
 * - `settings.knowledgeTokenBudget`: the most estimated tokens of the agent's documents one prompt may carry
 *   (`DOCUMENT_BOUNDS`); 0 leaves them out.
 * - `settings.concurrentMessages`: what a message does when its conversation has one in progress
 *   (`CONFLICT_MODES`); a send's `onConflict` overrides it.
 * `null` means unset. Other keys of `settings` are platform configuration and are not checked here.
 */
export const GENERATION_BOUNDS = {
  temperature: { min: 0, max: 2 },
  maxTokens: { min: 1, max: 8192, default: 1024 },
  /** Rounds of tool calls in one turn (docs/api/plugins-and-tools.md, "Tools in a turn"); 0 offers the model no tools. */
  maxToolSteps: { min: 0, max: 20, default: 5 },
} as const;

/** Memories of users (docs/api/memories.md): how many an agent keeps per user, and a memory's length. */
export const MEMORY_BOUNDS = {
  memoryLimit: { min: 1, max: 1000, default: 100 },
  textMaxLength: 1000,
} as const;

/**
 * Knowledge documents (docs/api/documents.md): the largest upload, a title's length, and how many estimated tokens
 * of their chunks one prompt may carry (`settings.knowledgeTokenBudget`).
 */
export const DOCUMENT_BOUNDS = {
  maxBytes: 10 * 1024 * 1024,
  titleMaxLength: 200,
  sourceMaxLength: 1000,
  knowledgeTokenBudget: { min: 0, max: 8000, default: 1000 },
} as const;

/**
 * `settings.toolChoice`: `auto` (the default) lets the model decide whether to call a tool; `required` makes it
 * call one in the turn's first round, when the agent has tools to offer. The rounds after it are `auto`.
 */
export const TOOL_CHOICES = ["auto", "required"] as const;
export type ToolChoice = (typeof TOOL_CHOICES)[number];

/**
 * What a message does when its conversation (agent, user, room) has a message in progress
 * (docs/api/messages-and-streams.md, "Conflicts"): `reject` it (409 CONVERSATION_BUSY), `enqueue` it to be
 * answered after (the default), or `interrupt` the one in progress (it ends with the text it had, cancelled).
 */
export const CONFLICT_MODES = ["reject", "enqueue", "interrupt"] as const;
export type ConflictMode = (typeof CONFLICT_MODES)[number];
export const DEFAULT_CONFLICT_MODE: ConflictMode = "enqueue";

/** The problems of an agent's generation settings, as error `details` items; empty when they are within bounds. */
export function generationSettingsIssues(
  settings: Readonly<Record<string, unknown>> | undefined,
): { field: string; issue: string }[] {
  const issues: { field: string; issue: string }[] = [];
  const temperature = settings?.temperature;
  if (temperature != null) {
    const { min, max } = GENERATION_BOUNDS.temperature;
    if (typeof temperature !== "number" || !(temperature >= min && temperature <= max)) {
      issues.push({ field: "settings.temperature", issue: `must be a number from ${min} to ${max}` });
    }
  }
  const maxTokens = settings?.maxTokens;
  if (maxTokens != null) {
    const { min, max } = GENERATION_BOUNDS.maxTokens;
    if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < min || maxTokens > max) {
      issues.push({ field: "settings.maxTokens", issue: `must be an integer from ${min} to ${max}` });
    }
  }
  const maxToolSteps = settings?.maxToolSteps;
  if (maxToolSteps != null) {
    const { min, max } = GENERATION_BOUNDS.maxToolSteps;
    if (
      typeof maxToolSteps !== "number" ||
      !Number.isInteger(maxToolSteps) ||
      maxToolSteps < min ||
      maxToolSteps > max
    ) {
      issues.push({ field: "settings.maxToolSteps", issue: `must be an integer from ${min} to ${max}` });
    }
  }
  const toolChoice = settings?.toolChoice;
  if (toolChoice != null && !(TOOL_CHOICES as readonly unknown[]).includes(toolChoice)) {
    issues.push({ field: "settings.toolChoice", issue: `must be one of ${TOOL_CHOICES.join(", ")}` });
  }
  const memory = settings?.memory;
  if (memory != null && typeof memory !== "boolean") {
    issues.push({ field: "settings.memory", issue: "must be true or false" });
  }
  const memoryLimit = settings?.memoryLimit;
  if (memoryLimit != null) {
    const { min, max } = MEMORY_BOUNDS.memoryLimit;
    if (
      typeof memoryLimit !== "number" ||
      !Number.isInteger(memoryLimit) ||
      memoryLimit < min ||
      memoryLimit > max
    ) {
      issues.push({ field: "settings.memoryLimit", issue: `must be an integer from ${min} to ${max}` });
    }
  }
  const knowledgeTokenBudget = settings?.knowledgeTokenBudget;
  if (knowledgeTokenBudget != null) {
    const { min, max } = DOCUMENT_BOUNDS.knowledgeTokenBudget;
    if (
      typeof knowledgeTokenBudget !== "number" ||
      !Number.isInteger(knowledgeTokenBudget) ||
      knowledgeTokenBudget < min ||
      knowledgeTokenBudget > max
    ) {
      issues.push({
        field: "settings.knowledgeTokenBudget",
        issue: `must be an integer from ${min} to ${max}`,
      });
    }
  }
  const concurrentMessages = settings?.concurrentMessages;
  if (concurrentMessages != null && !(CONFLICT_MODES as readonly unknown[]).includes(concurrentMessages)) {
    issues.push({
      field: "settings.concurrentMessages",
      issue: `must be one of ${CONFLICT_MODES.join(", ")}`,
    });
  }
  issues.push(...fallbackIssues(settings?.fallbacks));
  return issues;
}

/** A model to answer with when the agent's own fails (`settings.fallbacks`); a null model is the provider's default. */
export interface FallbackChoice {
  modelProvider: ProviderName;
  model: string | null;
}

/**
 * `settings.fallbacks`: at most this many `{modelProvider, model?}`, tried in order when the agent's own model fails
 * with a 503-class error (docs/api/messages-and-streams.md, "Fallbacks").
 */
export const FALLBACK_MAX_ITEMS = 3;

function fallbackIssues(fallbacks: unknown): { field: string; issue: string }[] {
  if (fallbacks == null) return [];
  const field = "settings.fallbacks";
  if (!Array.isArray(fallbacks) || fallbacks.length > FALLBACK_MAX_ITEMS) {
    return [
      { field, issue: `must be an array of at most ${FALLBACK_MAX_ITEMS} {modelProvider, model} objects` },
    ];
  }
  const issues: { field: string; issue: string }[] = [];
  fallbacks.forEach((item: unknown, index) => {
    const at = `${field}[${index}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      issues.push({ field: at, issue: "must be an object {modelProvider, model}" });
      return;
    }
    const { modelProvider, model, ...rest } = item as Record<string, unknown>;
    if (typeof modelProvider !== "string" || !isProviderName(modelProvider)) {
      issues.push({ field: `${at}.modelProvider`, issue: `must be one of ${PROVIDER_NAMES.join(", ")}` });
    }
    if (
      model != null &&
      (typeof model !== "string" ||
        model.trim() === "" ||
        exceedsCharacters(model, AGENT_BOUNDS.modelMaxLength))
    ) {
      issues.push({
        field: `${at}.model`,
        issue: `must be 1 to ${AGENT_BOUNDS.modelMaxLength} characters, or null`,
      });
    }
    for (const name of Object.keys(rest))
      issues.push({ field: `${at}.${name}`, issue: "is not a known field" });
  });
  return issues;
}

/** The fallbacks of settings that passed `generationSettingsIssues`, in order; none when unset. */
export function fallbackChoices(settings: Readonly<Record<string, unknown>> | undefined): FallbackChoice[] {
  const fallbacks = settings?.fallbacks;
  if (!Array.isArray(fallbacks)) return [];
  return fallbacks.map((item) => {
    const { modelProvider, model } = item as { modelProvider: ProviderName; model?: string | null };
    return { modelProvider, model: model ?? null };
  });
}

/**
 * `settings.secrets` is write-only (docs/api/agents.md, "Record"): stored for the agent, never part of any read,
 * event or export, so a key pasted into a character file cannot leak back out through the API.
 */
export const SECRETS_SETTING = "secrets";

/** An agent's settings as every read presents them: without `secrets`. */
export function publicSettings<T extends Readonly<Record<string, unknown>>>(settings: T): T {
  if (!Object.hasOwn(settings, SECRETS_SETTING)) return settings;
  const { [SECRETS_SETTING]: _hidden, ...rest } = settings;
  return rest as T;
}

/**
 * The settings an update of `settings` leaves. Since reads never show `secrets`, settings read, changed and
 * written back do not hold them: such an update keeps the stored ones. Sending `secrets` replaces them (`{}`
 * clears them).
 */
export function updatedSettings<T extends Readonly<Record<string, unknown>>>(stored: T, sent: T): T {
  if (Object.hasOwn(sent, SECRETS_SETTING) || !Object.hasOwn(stored, SECRETS_SETTING)) return sent;
  return { ...sent, [SECRETS_SETTING]: stored[SECRETS_SETTING] };
}
