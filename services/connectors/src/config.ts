import { env, parseEnv, z } from "@agentry/config";
import { metricsEnv } from "@agentry/observability";

/** The settings of the connectors themselves, which the all-in-one server reads too when it embeds the service. */
export const connectorSettingsSchema = z.object({
  /** The Telegram Bot API's root; Telegram's own by default. */
  TELEGRAM_API_URL: z.string().url().optional(),
  /** The Discord REST API's root, without the version (`https://discord.com/api`); Discord's own by default. */
  DISCORD_API_URL: z.string().url().optional(),
  /** The Discord gateway (`wss://…`); by default the address Discord names in `GET /gateway/bot`. */
  DISCORD_GATEWAY_URL: z.string().url().optional(),
  /** The Slack Web API's root, ending in `/`; Slack's own by default. */
  SLACK_API_URL: z.string().url().optional(),
  /** How often agents are read again for changes to their clients, status and secrets. */
  CONNECTORS_SYNC_INTERVAL_MS: z.coerce.number().int().min(200).max(5_000).default(2_000),
  /** How long a poller's lease on a bot token holds; another process takes over within it after a crash. */
  CONNECTORS_LEASE_MS: z.coerce.number().int().min(1_000).max(15_000).default(10_000),
});

export type ConnectorSettings = z.infer<typeof connectorSettingsSchema>;

export const connectorsEnvSchema = connectorSettingsSchema.extend({
  CONNECTORS_PORT: env.port(8084),
  // Loopback by default: the service trusts its callers, so exposing it is a choice.
  HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: env.dataDir(),
  DATABASE_URL: env.databaseUrl(),
  /** The registry and the conversation service this process reads agents from and sends turns to. */
  REGISTRY_URL: z.string().url(),
  CONVERSATION_URL: z.string().url(),
  /** The gateway's public origin: Telegram pushes webhook-mode updates to its /v1/connectors route. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  RPC_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  SHUTDOWN_TIMEOUT_MS: env.shutdownTimeout(10_000),
  LOG_LEVEL: env.logLevel(),
  LOG_FORMAT: env.logFormat(),
  ...metricsEnv,
});

export type ConnectorsConfig = z.infer<typeof connectorsEnvSchema>;

/** What the migrations job reads: only where the store is, so it runs without the services' addresses. */
export const connectorsMigrationEnvSchema = z.object({
  DATA_DIR: env.dataDir(),
  DATABASE_URL: env.databaseUrl(),
  LOG_LEVEL: env.logLevel(),
  LOG_FORMAT: env.logFormat(),
});

/** The service's variables, validated once. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): ConnectorsConfig {
  return parseEnv(connectorsEnvSchema, environment);
}

/** The connectors' settings alone, as the all-in-one server reads them. */
export function loadConnectorSettings(environment: NodeJS.ProcessEnv = process.env): ConnectorSettings {
  return parseEnv(connectorSettingsSchema, environment);
}

/** The migrations job's variables. */
export function loadMigrationConfig(
  environment: NodeJS.ProcessEnv = process.env,
): z.infer<typeof connectorsMigrationEnvSchema> {
  return parseEnv(connectorsMigrationEnvSchema, environment);
}
