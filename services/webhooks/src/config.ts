import { env, parseEnv, z } from "@agentry/config";
import { metricsEnv } from "@agentry/observability";
import { DEFAULT_RETRY_SCHEDULE_MS, parseRetrySchedule } from "./domain/schedule.js";

const { optional } = env;

export const webhooksEnvSchema = z.object({
  WEBHOOKS_PORT: env.port(8083),
  // Loopback by default: the service trusts its callers (they name the account), so exposing it is a choice.
  HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: env.dataDir(),
  DATABASE_URL: env.databaseUrl(),
  /** Delays before each retry, e.g. `5s,5m,30m,2h,5h,10h,10h` (the default); jitter is added. */
  WEBHOOK_RETRY_SCHEDULE: optional(z.string()).transform((text, ctx) => {
    if (text === undefined) return [...DEFAULT_RETRY_SCHEDULE_MS];
    try {
      return parseRetrySchedule(text);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
      return z.NEVER;
    }
  }),
  /** true: endpoints may be http and point at loopback and private networks (development and tests only). */
  ALLOW_PRIVATE_NETWORKS: env.allowPrivateNetworks(),
  /** The base64 of 32 random bytes: endpoint secrets are stored encrypted with it. Unset: stored as they are. */
  WEBHOOK_SECRETS_KEY: optional(env.sealingKey()),
  /** How long a worker's claim of an endpoint holds without news; a killed worker's attempts wait this long. */
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(15_000).default(60_000),
  /** Endpoints one process delivers to at once. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).default(16),
  /** Days an event and its delivery log are kept once no attempt of it is pending. */
  WEBHOOK_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  SHUTDOWN_TIMEOUT_MS: env.shutdownTimeout(10_000),
  AUDIT_RETENTION_DAYS: env.auditRetentionDays(),
  LOG_LEVEL: env.logLevel(),
  LOG_FORMAT: env.logFormat(),
  ...metricsEnv,
});

export type WebhooksConfig = z.infer<typeof webhooksEnvSchema>;

/** The service's variables, validated once; the all-in-one server reads the same ones when it embeds the service. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  return parseEnv(webhooksEnvSchema, environment);
}
