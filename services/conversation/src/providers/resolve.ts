import { join } from "node:path";
import { AppError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import { terminalOf } from "../models/progress.js";
import { createAnthropicProvider } from "./anthropic.js";
import type { LocalGpu } from "./local/engine.js";
import {
  createLocalProvider,
  DEFAULT_LOCAL_MAX_QUEUE,
  DEFAULT_LOCAL_MAX_TOKENS,
  DEFAULT_LOCAL_REPLY_TIMEOUT_MS,
  type LocalProvider,
} from "./local.js";
import { createOpenAIProvider } from "./openai.js";
import { isProviderName, type ModelProvider, PROVIDER_NAMES, type ProviderName } from "./types.js";

export const DEFAULT_OPENAI_MODEL = "gpt-4o-mini";
export const DEFAULT_ANTHROPIC_MODEL = "claude-haiku-5-5";
export const DEFAULT_PROVIDER_TIMEOUT_MS = 60_000;
export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 20_000;

/** How the service reaches model providers; `loadConversationConfig` reads it from the conventional variables. */
export interface ProvidersConfig {
  /** DEFAULT_MODEL_PROVIDER: for agents that name none. Unset: whichever provider has a key, else `local`. */
  defaultProvider?: ProviderName;
  /** OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL. Configured when the key or the base URL is set. */
  openai?: { apiKey?: string; baseURL?: string; model?: string };
  /** ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL. Configured when the key is set. */
  anthropic?: { apiKey?: string; baseURL?: string; model?: string };
  /** The in-process model (LOCAL_*); served unless `enabled` is false, since it needs no key. */
  local?: LocalConfig;
  /** PROVIDER_TIMEOUT_MS: the whole provider call, streamed or not. */
  timeoutMs?: number;
  /** PROVIDER_FIRST_TOKEN_TIMEOUT_MS: until the first text of a streamed reply. */
  firstTokenTimeoutMs?: number;
}

/** The `local` provider's settings; see `LocalProviderOptions`. */
export interface LocalConfig {
  /** LOCAL_MODEL_PATH: a GGUF chat model to use instead of the default one. */
  modelPath?: string;
  /** LOCAL_MODEL_DIR: where the default model is cached and fetched to; `<dataDir>/models` when unset. */
  modelDir?: string;
  /** LOCAL_MAX_QUEUE (8). */
  maxQueue?: number;
  /** LOCAL_THREADS (0: half the cores). */
  threads?: number;
  /** LOCAL_CONTEXT_SIZE (0: the model's own, up to 8192). */
  contextSize?: number;
  /** LOCAL_GPU ("auto"). */
  gpu?: LocalGpu;
  /** LOCAL_REPLY_TIMEOUT_MS (20 s): a reply ends with what it has when it passes. */
  replyTimeoutMs?: number;
  /** LOCAL_MAX_TOKENS: a reply's bound when the agent sets no `settings.maxTokens`. */
  maxTokens?: number;
  /** LOCAL_PRELOAD: load (and if need be fetch) the model at start instead of on the first message. */
  preload?: boolean;
  /** LOCAL_ENABLED: false keeps the provider off, for deployments that serve hosted models only. */
  enabled?: boolean;
}

/** What this deployment serves (ListProviders): each provider's default model and, for some, its only models. */
export interface ProviderCatalog {
  providers: { name: ProviderName; defaultModel: string; models: string[] }[];
  defaultProvider: ProviderName;
}

/** The providers this process can call, built once so their HTTP connections are reused. */
export class ProviderSet {
  readonly defaultProvider: ProviderName;
  /** Whether the default is `local` only because no hosted provider is configured. */
  readonly localByDefault: boolean;
  /** Undefined when LOCAL_ENABLED is false. */
  readonly local: LocalProvider | undefined;
  private readonly providers: Partial<Record<ProviderName, ModelProvider>> = {};

  /** `dataDir` holds the local model's cache unless `config.local.modelDir` says otherwise. */
  constructor(config: ProvidersConfig, logger: Logger, dataDir: string) {
    const timeoutMs = config.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
    const openai = config.openai ?? {};
    if (openai.apiKey || openai.baseURL) {
      this.providers.openai = createOpenAIProvider({
        ...(openai.apiKey ? { apiKey: openai.apiKey } : {}),
        ...(openai.baseURL ? { baseURL: openai.baseURL } : {}),
        defaultModel: openai.model || DEFAULT_OPENAI_MODEL,
        timeoutMs,
      });
    }
    const anthropic = config.anthropic ?? {};
    if (anthropic.apiKey) {
      this.providers.anthropic = createAnthropicProvider({
        apiKey: anthropic.apiKey,
        ...(anthropic.baseURL ? { baseURL: anthropic.baseURL } : {}),
        defaultModel: anthropic.model || DEFAULT_ANTHROPIC_MODEL,
        timeoutMs,
      });
    }
    const local = config.local ?? {};
    if (local.enabled !== false) {
      this.local = createLocalProvider({
        location: { path: local.modelPath, dir: local.modelDir ?? join(dataDir, "models") },
        maxQueue: local.maxQueue ?? DEFAULT_LOCAL_MAX_QUEUE,
        gpu: local.gpu ?? "auto",
        threads: local.threads ?? 0,
        contextSize: local.contextSize ?? 0,
        replyTimeoutMs: local.replyTimeoutMs ?? DEFAULT_LOCAL_REPLY_TIMEOUT_MS,
        defaultMaxTokens: local.maxTokens ?? DEFAULT_LOCAL_MAX_TOKENS,
        logger: logger.child({ provider: "local" }),
        terminal: terminalOf(),
      });
      this.providers.local = this.local;
    }
    const hosted = this.providers.openai ? "openai" : this.providers.anthropic ? "anthropic" : undefined;
    this.defaultProvider = config.defaultProvider ?? hosted ?? "local";
    this.localByDefault = config.defaultProvider === undefined && hosted === undefined;
  }

  /** Frees the local model, if it was loaded. */
  async close(): Promise<void> {
    await this.local?.close();
  }

  /**
   * The providers this process serves. Hosted providers take any model name (the provider refuses an unknown
   * one); the local provider runs one model file and answers no other name.
   */
  catalog(): ProviderCatalog {
    const providers = PROVIDER_NAMES.flatMap((name) => {
      const provider = this.providers[name];
      if (!provider) return [];
      return [
        {
          name,
          defaultModel: provider.defaultModel,
          models: name === "local" ? [provider.defaultModel] : [],
        },
      ];
    });
    return { providers, defaultProvider: this.defaultProvider };
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
  return `The ${name} provider is turned off in this deployment (LOCAL_ENABLED=false).`;
}
