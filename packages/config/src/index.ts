import { resolve } from "node:path";
import { z } from "zod";
import { sealingKey } from "./keys.js";

export { z };

/** Raised when the environment does not satisfy a service's schema; its message is one line per problem. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Parses the environment once at start-up. A bad environment is reported as one clear line per variable, so
 * a process can stop with it instead of failing later in a handler.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) {
    const data = result.data as z.infer<S> & { DATA_DIR?: unknown };
    // A relative DATA_DIR is taken from where the command was typed (INIT_CWD, set by pnpm), not from the
    // package directory a workspace script runs in.
    if (typeof data.DATA_DIR === "string")
      data.DATA_DIR = resolve(env.INIT_CWD ?? process.cwd(), data.DATA_DIR);
    return data;
  }
  const lines = result.error.issues.map(
    (issue) => `${issue.path.join(".") || "environment"}: ${issue.message}`,
  );
  throw new ConfigError(`invalid configuration: ${lines.join("; ")}`);
}

/** An unset variable and an empty one (`OPENAI_API_KEY=` in a compose file) mean the same. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === "" ? undefined : value), schema.optional());
}

/** `true`/`false` (or `1`/`0`), as every switch is written. */
function flag(fallback: "true" | "false") {
  return z
    .enum(["true", "false", "1", "0"])
    .default(fallback)
    .transform((value) => value === "true" || value === "1");
}

/**
 * The pieces of the deployables' schemas. A variable several deployables read is defined here once, so it means
 * the same and is checked the same everywhere.
 */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  /** Under the name DATA_DIR, parseEnv resolves it to an absolute path (see there). */
  dataDir: () => z.string().min(1).default("./data"),
  /** DATABASE_URL: Postgres for the stores (postgres://user:password@host/db); unset or empty keeps SQLite. */
  databaseUrl: () => optional(z.url({ protocol: /^postgres(ql)?$/, error: "must be a postgres:// URL" })),
  logLevel: () => z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  logFormat: () => z.enum(["json", "pretty", "auto"]).default("auto"),
  url: () => z.url(),
  milliseconds: (fallback: number) => z.coerce.number().int().min(0).default(fallback),
  /** SHUTDOWN_TIMEOUT_MS: on SIGTERM, how long in-flight requests and streams may run before they are cut. */
  shutdownTimeout: (fallback = 25_000) => z.coerce.number().int().min(0).default(fallback),
  /**
   * AUDIT_RETENTION_DAYS: how long each service keeps the audit events it records (365 by default); 0 keeps them
   * forever.
   */
  auditRetentionDays: () => z.coerce.number().int().min(0).max(36_500).default(365),
  /**
   * PUBLIC_BASE_URL: the origin callers reach the REST API at. Agents' `apiEndpoint` links are built from it, in
   * the gateway's answers and in the agent events the registry publishes, so both must be given the same one.
   * Unset here; each deployable says what it falls back to. A trailing slash is dropped.
   */
  publicBaseUrl: () => optional(z.url()).transform((value) => value?.replace(/\/+$/, "")),
  /**
   * WEBHOOKS_URL: the webhooks service in another process (HTTP/2 without TLS, e.g. `http://webhooks:8083`).
   * Gateways call it for the webhook routes; the registry's outbox relays agent events to it; the all-in-one
   * server embeds the service instead when it is unset.
   */
  webhooksUrl: () => optional(z.url()),
  /**
   * REGISTRY_URL: the registry in another process (HTTP/2 without TLS, e.g. `http://registry:8081`). Gateways
   * call it for every agent route; the conversation service reads agents' plugin secrets and knowledge from it
   * for the tools of a turn; the all-in-one server embeds the registry instead when it is unset.
   */
  registryUrl: () => optional(z.url()),
  /**
   * ALLOW_PRIVATE_NETWORKS: `true` lets outbound calls made for users (webhook deliveries, later the http and mcp
   * plugins) use http and reach loopback and private addresses. For development and tests only.
   */
  allowPrivateNetworks: () => flag("false"),
  /** A key that seals secrets at rest (SECRETS_KEY, WEBHOOK_SECRETS_KEY): the base64 of 32 random bytes. */
  sealingKey,
  flag,
  optional,
};

/** The gateway's port when PORT is unset. */
export const DEFAULT_GATEWAY_PORT = 8080;

/**
 * PORT and PUBLIC_BASE_URL as the gateway reads them, to spread into a schema's object; `publicOrigin` makes the
 * origin of them. What prints links to the gateway (its own answers, the CLI's console sign-in links) reads both
 * through these, so that a gateway moved to another port and its links agree.
 */
export const gatewayAddress = () => ({
  PORT: env.port(DEFAULT_GATEWAY_PORT),
  PUBLIC_BASE_URL: env.publicBaseUrl(),
});

/** The origin callers reach the gateway at: PUBLIC_BASE_URL, else http://localhost:PORT. */
export function publicOrigin(value: { PORT: number; PUBLIC_BASE_URL?: string | undefined }): string {
  return value.PUBLIC_BASE_URL ?? `http://localhost:${value.PORT}`;
}

/** Runs main and, when it fails because of configuration, prints the one line and exits 1. */
export function exitOnConfigError(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  throw error;
}

export { isSealingKey, type KeyInDataDirOptions, keyInDataDir } from "./keys.js";
