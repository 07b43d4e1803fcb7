import { env, parseEnv, z } from "@agentry/config";
import { type ConversationConfig, loadConversationConfig } from "@agentry/conversation";
import { metricsEnv } from "@agentry/observability";

const schema = z
  .object({
    PORT: env.port(8080),
    HOST: z.string().min(1).default("0.0.0.0"),
    DATA_DIR: env.dataDir(),
    /** Postgres for the embedded services' stores; unset or empty keeps SQLite in DATA_DIR. */
    DATABASE_URL: z.preprocess(
      (value) => (value === "" ? undefined : value),
      z.url({ protocol: /^postgres(ql)?$/, error: "must be a postgres:// URL" }).optional(),
    ),
    /** The origin callers reach the service at; links such as `apiEndpoint` are built from it. */
    PUBLIC_BASE_URL: env.url().optional(),
    /** Where the registry runs when it is not embedded (HTTP/2 without TLS, e.g. http://registry:8081). */
    REGISTRY_URL: env.url().optional(),
    /** Where the conversation service runs when it is not embedded (HTTP/2 without TLS). */
    CONVERSATION_URL: env.url().optional(),
    /** Shared limiter state, so limits are exact across every gateway using it; unset keeps them in memory. */
    REDIS_URL: env.url().optional(),
    /** How long a concurrency slot outlives a gateway that died holding it. */
    CONCURRENCY_LEASE_MS: env.milliseconds(15_000),
    /** How long a verified API key is trusted without asking the registry again. */
    AUTH_CACHE_TTL_MS: env.milliseconds(750),
    /** How often API key last-use times are written (one batch per interval). */
    KEY_USAGE_FLUSH_MS: env.milliseconds(10_000),
    /** Deadline of each call to another service. */
    RPC_TIMEOUT_MS: env.milliseconds(10_000),
    /** Deadline of a message call, streamed or not; the provider's own timeouts are shorter. */
    MESSAGE_TIMEOUT_MS: env.milliseconds(120_000),
    /** On SIGTERM, how long in-flight requests may take before the process exits anyway. */
    SHUTDOWN_TIMEOUT_MS: env.milliseconds(25_000),
    LOG_LEVEL: env.logLevel(),
    LOG_FORMAT: env.logFormat(),
    ...metricsEnv,
  })
  .transform((value) => ({
    ...value,
    PUBLIC_BASE_URL: (value.PUBLIC_BASE_URL ?? `http://localhost:${value.PORT}`).replace(/\/+$/, ""),
  }));

export type GatewayConfig = z.infer<typeof schema> & {
  /** The embedded conversation service's configuration; absent when CONVERSATION_URL is set. */
  conversation?: ConversationConfig;
};

/** Parses the gateway's variables and, when the conversation service is embedded, its variables too. */
export function loadGatewayConfig(source: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const config: GatewayConfig = parseEnv(schema, source);
  if (!config.CONVERSATION_URL)
    config.conversation = loadConversationConfig({ ...source, DATA_DIR: config.DATA_DIR });
  return config;
}
