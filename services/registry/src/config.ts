import { env, parseEnv, z } from "@agentry/config";
import { metricsEnv } from "@agentry/observability";

export const registryEnvSchema = z.object({
  REGISTRY_PORT: env.port(8081),
  // Loopback by default: the registry trusts its callers, so exposing it is a deliberate choice.
  REGISTRY_HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: env.dataDir(),
  DATABASE_URL: env.databaseUrl(),
  /** The conversation service, which the registry tells to purge a deleted agent's conversations (HTTP/2). */
  CONVERSATION_URL: env.url().optional(),
  /** The webhooks service, which the registry publishes agent events to for webhooks (HTTP/2). */
  WEBHOOKS_URL: env.webhooksUrl(),
  /**
   * The gateways' PUBLIC_BASE_URL: agent events carry each agent's `apiEndpoint`, built from it as the gateways
   * build theirs. The gateway's own default (its port 8080 on localhost) when unset.
   */
  PUBLIC_BASE_URL: env.publicBaseUrl().transform((value) => value ?? "http://localhost:8080"),
  LOG_LEVEL: env.logLevel(),
  LOG_FORMAT: env.logFormat(),
  SHUTDOWN_TIMEOUT_MS: env.shutdownTimeout(10_000),
  AUDIT_RETENTION_DAYS: env.auditRetentionDays(),
  ...metricsEnv,
});

export type RegistryConfig = z.infer<typeof registryEnvSchema>;

/** The variables of the migrations job and of the service. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): RegistryConfig {
  return parseEnv(registryEnvSchema, environment);
}

/**
 * The service's variables: SECRETS_KEY besides, required, since a registry of its own shares no DATA_DIR with the
 * all-in-one server that generates one there.
 */
export const registryServiceEnvSchema = registryEnvSchema.extend({
  /** The base64 of 32 random bytes (openssl rand -base64 32): agent secrets are sealed with it. */
  SECRETS_KEY: z
    .string({ error: "is required: the base64 of 32 random bytes (openssl rand -base64 32)" })
    .pipe(env.sealingKey()),
});

export function loadServiceConfig(environment: NodeJS.ProcessEnv = process.env) {
  return parseEnv(registryServiceEnvSchema, environment);
}
