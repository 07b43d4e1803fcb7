import { AppError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import { createAnthropicProvider } from "./anthropic.js";
import { createLocalProvider } from "./local.js";
import { createOpenAIProvider } from "./openai.js";
import { isProviderName, type ModelProvider, PROVIDER_NAMES, type ProviderName } from "./types.js";

export const DEFAULT_OPENAI_MODEL = "gpt-4o-mini";
export const DEFAULT_ANTHROPIC_MODEL = "claude-haiku-5-5";
export const DEFAULT_PROVIDER_TIMEOUT_MS = 60_000;
export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 20_000;

/** How the service reaches model providers; `loadConversationConfig` reads it from the conventional variables. */
export interface ProvidersConfig {
  /** DEFAULT_MODEL_PROVIDER: for agents that name none. Unset: whichever provider has a key. */
  defaultProvider?: ProviderName;
  /** OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL. Configured when the key or the base URL is set. */
  openai?: { apiKey?: string; baseURL?: string; model?: string };
  /** ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL. Configured when the key is set. */
  anthropic?: { apiKey?: string; baseURL?: string; model?: string };
  /** PROVIDER_TIMEOUT_MS: the whole provider call, streamed or not. */
  timeoutMs?: number;
  /** PROVIDER_FIRST_TOKEN_TIMEOUT_MS: until the first text of a streamed reply. */
  firstTokenTimeoutMs?: number;
}

export const NO_PROVIDER_MESSAGE =
  "No model provider is configured. Set DEFAULT_MODEL_PROVIDER=openai with OPENAI_API_KEY (and/or " +
  "OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama, vLLM or LM Studio), or " +
  "DEFAULT_MODEL_PROVIDER=anthropic with ANTHROPIC_API_KEY.";

/** The providers this process can call, built once so their HTTP connections are reused. */
export class ProviderSet {
  readonly defaultProvider: ProviderName | undefined;
  private readonly providers: Partial<Record<ProviderName, ModelProvider>> = {};

  constructor(config: ProvidersConfig, logger: Logger) {
    const timeoutMs = config.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
    const openai = config.openai ?? {};
    if (openai.apiKey || openai.baseURL) {
      this.providers.openai = createOpenAIProvider({
        ...(openai.apiKey ? { apiKey: openai.apiKey } : {}),
        ...(openai.baseURL ? { baseURL: openai.baseURL } : {}),
        defaultModel: openai.model || DEFAULT_OPENAI_MODEL,
        timeoutMs,
        logger,
      });
    }
    const anthropic = config.anthropic ?? {};
    if (anthropic.apiKey) {
      this.providers.anthropic = createAnthropicProvider({
        apiKey: anthropic.apiKey,
        ...(anthropic.baseURL ? { baseURL: anthropic.baseURL } : {}),
        defaultModel: anthropic.model || DEFAULT_ANTHROPIC_MODEL,
        timeoutMs,
        logger,
      });
    }
    // The slot for the in-process model: a build that ships one puts it here.
    this.providers.local = createLocalProvider();
    this.defaultProvider =
      config.defaultProvider ??
      (this.providers.openai ? "openai" : this.providers.anthropic ? "anthropic" : undefined);
  }

  /**
   * The provider and model for an agent: its own `modelProvider`, else the server default; its own `model`,
   * else the provider's default. Anything that cannot work until the configuration changes is MODEL_ERROR with
   * a message that says what to set.
   */
  resolve(
    agentProvider: string | undefined,
    agentModel: string | undefined,
  ): { provider: ModelProvider; model: string } {
    const name = agentProvider || this.defaultProvider;
    if (!name) throw new AppError("MODEL_ERROR", NO_PROVIDER_MESSAGE);
    if (!isProviderName(name)) {
      throw new AppError(
        "MODEL_ERROR",
        `The model provider "${name}" is not supported. Use one of: ${PROVIDER_NAMES.join(", ")}.`,
      );
    }
    const provider = this.providers[name];
    if (!provider) throw new AppError("MODEL_ERROR", notConfigured(name));
    return { provider, model: agentModel || provider.defaultModel };
  }
}

function notConfigured(name: ProviderName): string {
  if (name === "openai") {
    return (
      "The openai provider is not configured. Set OPENAI_API_KEY, and OPENAI_BASE_URL for an " +
      "OpenAI-compatible server such as Ollama, vLLM or LM Studio (the key may then be omitted)."
    );
  }
  if (name === "anthropic") {
    return "The anthropic provider is not configured. Set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy).";
  }
  return `The ${name} provider is not configured.`;
}
