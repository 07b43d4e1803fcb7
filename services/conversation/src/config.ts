import { resolve } from "node:path";
import { env, parseEnv, z } from "@agentry/config";
import { GENERATION_BOUNDS } from "@agentry/core";
import { metricsEnv } from "@agentry/observability";
import {
  DEFAULT_EMBEDDINGS_MODEL,
  DEFAULT_EMBEDDINGS_TIMEOUT_MS,
  EMBEDDINGS_PROVIDERS,
  type EmbeddingsConfig,
} from "./embeddings.js";
import {
  DEFAULT_LEASE_MS,
  DEFAULT_LEASE_RENEW_MS,
  DEFAULT_TAKEOVER_SCAN_MS,
  type RunLeases,
} from "./message-runs.js";
import {
  DEFAULT_LOCAL_MAX_QUEUE,
  DEFAULT_LOCAL_MAX_TOKENS,
  DEFAULT_LOCAL_REPLY_TIMEOUT_MS,
} from "./providers/local.js";
import {
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_OPENAI_MODEL,
  DEFAULT_PROVIDER_TIMEOUT_MS,
  type ProvidersConfig,
} from "./providers/resolve.js";
import { PROVIDER_NAMES } from "./providers/types.js";
import { DEFAULT_SCHEDULE_SCAN_MS } from "./schedules.js";

export const DEFAULT_CONTEXT_TOKEN_BUDGET = 3000;

const { optional } = env;

const variables = z.object({
  CONVERSATION_PORT: env.port(8082),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATA_DIR: env.dataDir(),
  /** Postgres for the store (postgres://user:password@host/db); unset or empty keeps SQLite in DATA_DIR. */
  DATABASE_URL: env.databaseUrl(),
  /** For agents without modelProvider; unset: whichever of OPENAI_API_KEY / ANTHROPIC_API_KEY is set, else local. */
  DEFAULT_MODEL_PROVIDER: optional(z.enum(PROVIDER_NAMES)),
  OPENAI_API_KEY: optional(z.string()),
  /** Any OpenAI-compatible server (Ollama, vLLM, LM Studio, OpenRouter), e.g. http://localhost:11434/v1. */
  OPENAI_BASE_URL: optional(env.url()),
  OPENAI_MODEL: z.string().min(1).default(DEFAULT_OPENAI_MODEL),
  ANTHROPIC_API_KEY: optional(z.string()),
  ANTHROPIC_BASE_URL: optional(env.url()),
  ANTHROPIC_MODEL: z.string().min(1).default(DEFAULT_ANTHROPIC_MODEL),
  /** A GGUF chat model for the local provider instead of the default one (never fetched). */
  LOCAL_MODEL_PATH: optional(z.string()),
  /** Where the default local model is cached and fetched to; unset: `<DATA_DIR>/models`. */
  LOCAL_MODEL_DIR: optional(z.string()),
  LOCAL_MAX_QUEUE: z.coerce.number().int().min(0).default(DEFAULT_LOCAL_MAX_QUEUE),
  LOCAL_THREADS: z.coerce.number().int().min(0).default(0),
  LOCAL_CONTEXT_SIZE: z.coerce.number().int().min(0).default(0),
  LOCAL_GPU: z.enum(["auto", "off"]).default("auto"),
  /** How long a local reply may take, its wait for the model included; then it ends with what it has. */
  LOCAL_REPLY_TIMEOUT_MS: z.coerce.number().int().min(1).default(DEFAULT_LOCAL_REPLY_TIMEOUT_MS),
  /** A local reply's token bound when the agent sets no `settings.maxTokens`. */
  LOCAL_MAX_TOKENS: z.coerce
    .number()
    .int()
    .min(GENERATION_BOUNDS.maxTokens.min)
    .max(GENERATION_BOUNDS.maxTokens.max)
    .default(DEFAULT_LOCAL_MAX_TOKENS),
  LOCAL_PRELOAD: env.flag("false"),
  /** false: the local model is not run here; agents naming `local` are kept with a warning, their messages fail. */
  LOCAL_ENABLED: env.flag("true"),
  /**
   * `openai`: memories are also recalled by meaning, with vectors from an OpenAI-compatible `POST /embeddings`.
   * Unset: recall is by full text alone.
   */
  EMBEDDINGS_PROVIDER: optional(z.enum(EMBEDDINGS_PROVIDERS)),
  /** The embeddings server, e.g. http://localhost:11434/v1; unset: OPENAI_BASE_URL, else the OpenAI API. */
  EMBEDDINGS_BASE_URL: optional(env.url()),
  /** Unset: OPENAI_API_KEY. */
  EMBEDDINGS_API_KEY: optional(z.string()),
  EMBEDDINGS_MODEL: z.string().min(1).default(DEFAULT_EMBEDDINGS_MODEL),
  /** The vectors' length, for models that can shorten theirs (text-embedding-3); unset: the model's own. */
  EMBEDDINGS_DIMENSIONS: optional(z.coerce.number().int().min(1).max(16_000)),
  EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(1).default(DEFAULT_EMBEDDINGS_TIMEOUT_MS),
  PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(1).default(DEFAULT_PROVIDER_TIMEOUT_MS),
  PROVIDER_FIRST_TOKEN_TIMEOUT_MS: z.coerce.number().int().min(1).default(DEFAULT_FIRST_TOKEN_TIMEOUT_MS),
  CONTEXT_TOKEN_BUDGET: z.coerce.number().int().min(0).default(DEFAULT_CONTEXT_TOKEN_BUDGET),
  /** How long a stream's events stay resumable after it ends: seconds, or a number with s, m or h; 1h. */
  STREAM_RETENTION: z
    .string()
    .regex(/^\d+(s|m|h)?$/, "must be a duration: seconds, or a number with s, m or h (e.g. 90s, 30m, 1h)")
    .default("1h")
    .transform(durationMs)
    .refine((ms) => ms >= 1000, "must be at least 1s"),
  /** How long a message paused for tool approval waits before it fails (APPROVAL_EXPIRED); 24h. */
  TOOL_APPROVAL_TIMEOUT: z
    .string()
    .regex(/^\d+(s|m|h)?$/, "must be a duration: seconds, or a number with s, m or h (e.g. 90s, 30m, 24h)")
    .default("24h")
    .transform(durationMs)
    .refine((ms) => ms >= 1000, "must be at least 1s"),
  /** How long a background message's lease lasts unless its process renews it (message-runs.ts); 10 s. */
  RUN_LEASE_MS: z.coerce.number().int().min(100).default(DEFAULT_LEASE_MS),
  /** How often a process renews the leases of the background messages it generates; 3 s. */
  RUN_LEASE_RENEW_MS: z.coerce.number().int().min(50).default(DEFAULT_LEASE_RENEW_MS),
  /** How often a process looks for background messages whose lease expired, to take them over; 2 s. */
  RUN_TAKEOVER_SCAN_MS: z.coerce.number().int().min(50).default(DEFAULT_TAKEOVER_SCAN_MS),
  /** How often each process looks for schedules whose fire is due (schedules.ts); 5 s. */
  SCHEDULE_SCAN_MS: z.coerce.number().int().min(100).default(DEFAULT_SCHEDULE_SCAN_MS),
  AUDIT_RETENTION_DAYS: env.auditRetentionDays(),
  SHUTDOWN_TIMEOUT_MS: env.shutdownTimeout(),
  /**
   * The webhooks service (HTTP/2), which message events are published to. Unset, the standalone service writes
   * none; the all-in-one server gives its conversation service the webhooks service it uses itself.
   */
  WEBHOOKS_URL: env.webhooksUrl(),
  /**
   * The registry (HTTP/2), whose PluginService keeps agents' plugin secrets and knowledge index, for the tools of
   * a turn. Unset, the standalone service offers agents no tools; the all-in-one server gives its conversation
   * service the registry it uses itself.
   */
  REGISTRY_URL: env.registryUrl(),
  /**
   * The gateways' Redis: spend budgets of the model calls no gateway sees (platform turns, schedule fires, memory
   * extraction) count on the same counters, exact across processes. Unset, this process counts them on its own.
   */
  REDIS_URL: env.url().optional(),
  /** The gateways' prices file (docs/api/budgets.md "Prices"), for budgets in US dollars. */
  PRICES_FILE: z.string().min(1).optional(),
  /** What a message to an agent is taken to spend, in tokens, before one of its messages has been seen here. */
  BUDGET_ESTIMATE_TOKENS: z.coerce.number().int().min(1).max(10_000_000).default(1000),
  /** Lets the http and mcp plugins reach http URLs and private addresses: for development and tests only. */
  ALLOW_PRIVATE_NETWORKS: env.allowPrivateNetworks(),
  LOG_LEVEL: env.logLevel(),
  LOG_FORMAT: env.logFormat(),
  ...metricsEnv,
});

// Without the local provider some provider must be configured, and the default must be one that is served.
const schema = variables.superRefine((value, ctx) => {
  if (value.RUN_LEASE_RENEW_MS >= value.RUN_LEASE_MS) {
    ctx.addIssue({
      code: "custom",
      path: ["RUN_LEASE_RENEW_MS"],
      message:
        "must be less than RUN_LEASE_MS (a third of it is usual), or every lease expires before it is renewed",
    });
  }
  if (value.LOCAL_ENABLED) return;
  const hosted = Boolean(value.OPENAI_API_KEY || value.OPENAI_BASE_URL || value.ANTHROPIC_API_KEY);
  if (!hosted) {
    ctx.addIssue({
      code: "custom",
      path: ["LOCAL_ENABLED"],
      message:
        "false leaves no model provider: set OPENAI_API_KEY (or OPENAI_BASE_URL) or ANTHROPIC_API_KEY, or serve local",
    });
  }
  if (value.DEFAULT_MODEL_PROVIDER === "local") {
    ctx.addIssue({
      code: "custom",
      path: ["DEFAULT_MODEL_PROVIDER"],
      message: "is local, which LOCAL_ENABLED=false turns off",
    });
  }
});

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000 } as const;

/** "90", "90s", "30m", "1h" in milliseconds (a bare number is seconds). */
function durationMs(value: string): number {
  const unit = value.at(-1) as keyof typeof UNIT_MS | string;
  if (unit in UNIT_MS) return Number(value.slice(0, -1)) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return Number(value) * 1000;
}

export interface ConversationConfig {
  port: number;
  host: string;
  dataDir: string;
  /** Postgres for the store; absent: SQLite in `dataDir`. */
  databaseUrl?: string;
  providers: ProvidersConfig;
  /** EMBEDDINGS_*: absent, memories are recalled by full text alone. */
  embeddings?: EmbeddingsConfig;
  contextTokenBudget: number;
  /** STREAM_RETENTION in milliseconds. */
  streamRetentionMs: number;
  /** RUN_LEASE_MS, RUN_LEASE_RENEW_MS and RUN_TAKEOVER_SCAN_MS: background messages' leases. */
  runLeases: RunLeases;
  /** SCHEDULE_SCAN_MS. */
  scheduleScanMs: number;
  /** TOOL_APPROVAL_TIMEOUT in milliseconds. */
  approvalTimeoutMs: number;
  /** AUDIT_RETENTION_DAYS: 0 keeps audit events forever. */
  auditRetentionDays: number;
  shutdownTimeoutMs: number;
  /** WEBHOOKS_URL: where the standalone service publishes message events; absent: it writes none. */
  webhooksUrl?: string;
  /** REGISTRY_URL: where the standalone service reads plugin secrets and knowledge; absent: no tools. */
  registryUrl?: string;
  /** ALLOW_PRIVATE_NETWORKS: the outbound guard of the plugins' calls lets http and private addresses through. */
  allowPrivateNetworks: boolean;
  /** REDIS_URL: the gateways' Redis, whose budget counters this service shares. */
  redisUrl?: string;
  /** PRICES_FILE. */
  pricesFile?: string;
  /** BUDGET_ESTIMATE_TOKENS. */
  budgetEstimateTokens: number;
  logLevel: string;
  logFormat: "json" | "pretty" | "auto";
  /** METRICS_PORT: where Prometheus metrics are served; unset, none are collected. */
  metricsPort?: number;
  /** METRICS_HOST: the metrics port's interface; `host` when unset. */
  metricsHost?: string;
}

/**
 * The service's configuration from the environment, validated once; a bad value throws ConfigError with one
 * line per variable. The gateway's all-in-one mode reads the same variables with it.
 */
export function loadConversationConfig(source: NodeJS.ProcessEnv = process.env): ConversationConfig {
  const value = parseEnv(schema, source);
  // Relative paths are taken from where the command was typed, as DATA_DIR is.
  const path = (p: string | undefined) => (p ? resolve(source.INIT_CWD ?? process.cwd(), p) : undefined);
  const modelPath = path(value.LOCAL_MODEL_PATH);
  const modelDir = path(value.LOCAL_MODEL_DIR);
  return {
    port: value.CONVERSATION_PORT,
    host: value.HOST,
    dataDir: value.DATA_DIR,
    ...(value.DATABASE_URL ? { databaseUrl: value.DATABASE_URL } : {}),
    providers: {
      ...(value.DEFAULT_MODEL_PROVIDER ? { defaultProvider: value.DEFAULT_MODEL_PROVIDER } : {}),
      openai: {
        ...(value.OPENAI_API_KEY ? { apiKey: value.OPENAI_API_KEY } : {}),
        ...(value.OPENAI_BASE_URL ? { baseURL: value.OPENAI_BASE_URL } : {}),
        model: value.OPENAI_MODEL,
      },
      anthropic: {
        ...(value.ANTHROPIC_API_KEY ? { apiKey: value.ANTHROPIC_API_KEY } : {}),
        ...(value.ANTHROPIC_BASE_URL ? { baseURL: value.ANTHROPIC_BASE_URL } : {}),
        model: value.ANTHROPIC_MODEL,
      },
      local: {
        ...(modelPath ? { modelPath } : {}),
        ...(modelDir ? { modelDir } : {}),
        maxQueue: value.LOCAL_MAX_QUEUE,
        threads: value.LOCAL_THREADS,
        contextSize: value.LOCAL_CONTEXT_SIZE,
        gpu: value.LOCAL_GPU === "off" ? false : "auto",
        replyTimeoutMs: value.LOCAL_REPLY_TIMEOUT_MS,
        maxTokens: value.LOCAL_MAX_TOKENS,
        preload: value.LOCAL_PRELOAD,
        enabled: value.LOCAL_ENABLED,
      },
      timeoutMs: value.PROVIDER_TIMEOUT_MS,
      firstTokenTimeoutMs: value.PROVIDER_FIRST_TOKEN_TIMEOUT_MS,
    },
    ...(value.EMBEDDINGS_PROVIDER ? { embeddings: embeddingsConfig(value) } : {}),
    contextTokenBudget: value.CONTEXT_TOKEN_BUDGET,
    streamRetentionMs: value.STREAM_RETENTION,
    runLeases: {
      leaseMs: value.RUN_LEASE_MS,
      renewMs: value.RUN_LEASE_RENEW_MS,
      scanMs: value.RUN_TAKEOVER_SCAN_MS,
    },
    scheduleScanMs: value.SCHEDULE_SCAN_MS,
    approvalTimeoutMs: value.TOOL_APPROVAL_TIMEOUT,
    auditRetentionDays: value.AUDIT_RETENTION_DAYS,
    shutdownTimeoutMs: value.SHUTDOWN_TIMEOUT_MS,
    ...(value.WEBHOOKS_URL ? { webhooksUrl: value.WEBHOOKS_URL } : {}),
    ...(value.REGISTRY_URL ? { registryUrl: value.REGISTRY_URL } : {}),
    allowPrivateNetworks: value.ALLOW_PRIVATE_NETWORKS,
    ...(value.REDIS_URL ? { redisUrl: value.REDIS_URL } : {}),
    ...(value.PRICES_FILE ? { pricesFile: value.PRICES_FILE } : {}),
    budgetEstimateTokens: value.BUDGET_ESTIMATE_TOKENS,
    logLevel: value.LOG_LEVEL,
    logFormat: value.LOG_FORMAT,
    ...(value.METRICS_PORT === undefined ? {} : { metricsPort: value.METRICS_PORT }),
    ...(value.METRICS_HOST === undefined ? {} : { metricsHost: value.METRICS_HOST }),
  };
}

/** The embeddings provider of the environment; its address and key default to the OpenAI provider's. */
function embeddingsConfig(value: z.infer<typeof variables>): EmbeddingsConfig {
  const baseURL = value.EMBEDDINGS_BASE_URL ?? value.OPENAI_BASE_URL;
  const apiKey = value.EMBEDDINGS_API_KEY ?? value.OPENAI_API_KEY;
  return {
    provider: value.EMBEDDINGS_PROVIDER ?? "openai",
    model: value.EMBEDDINGS_MODEL,
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(value.EMBEDDINGS_DIMENSIONS ? { dimensions: value.EMBEDDINGS_DIMENSIONS } : {}),
    timeoutMs: value.EMBEDDINGS_TIMEOUT_MS,
  };
}
