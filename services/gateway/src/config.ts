import { loadPrices } from "@agentry/budgets";
import { env, gatewayAddress, parseEnv, publicOrigin, z } from "@agentry/config";
import { DEFAULT_PRICE_TABLE, type PriceTable } from "@agentry/core";
import { metricsEnv } from "@agentry/observability";

export const gatewayEnvSchema = z
  .object({
    /** PORT, and PUBLIC_BASE_URL: the origin callers reach the service at; links such as `apiEndpoint` use it. */
    ...gatewayAddress(),
    HOST: z.string().min(1).default("0.0.0.0"),
    /** The registry (HTTP/2 without TLS, e.g. http://registry:8081); the all-in-one server embeds it when unset. */
    REGISTRY_URL: env.registryUrl(),
    /** The conversation service (HTTP/2 without TLS); the all-in-one server embeds it when unset. */
    CONVERSATION_URL: env.url().optional(),
    /** The webhooks service (HTTP/2 without TLS); the all-in-one server embeds it when unset. */
    WEBHOOKS_URL: env.webhooksUrl(),
    /** The connectors service (HTTP/2 without TLS); the all-in-one server embeds it when unset. */
    CONNECTORS_URL: env.url().optional(),
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
    SHUTDOWN_TIMEOUT_MS: env.shutdownTimeout(),
    /** The web console's built files, served at /console; the composition root points it at apps/console/dist. */
    CONSOLE_DIR: z.string().min(1).optional(),
    /** A console session ends after this long without a request... */
    CONSOLE_SESSION_IDLE_MS: env.milliseconds(30 * 60_000).pipe(z.number().min(60_000)),
    /** ...and this long after sign-in, however active. */
    CONSOLE_SESSION_MAX_MS: env.milliseconds(12 * 3600_000).pipe(
      z
        .number()
        .min(60_000)
        .max(30 * 24 * 3600_000),
    ),
    /** OIDC sign-in to the console (docs/api/members.md, "Signing in by OIDC"): the provider's issuer URL... */
    OIDC_ISSUER: env.url().optional(),
    /** ...this deployment's client at the provider... */
    OIDC_CLIENT_ID: z.string().min(1).optional(),
    OIDC_CLIENT_SECRET: z.string().min(1).optional(),
    /** ...and where the provider sends the browser back; PUBLIC_BASE_URL/console/oidc/callback by default. */
    OIDC_REDIRECT_URL: env.url().optional(),
    /** A prices file (JSON, docs/api/budgets.md "Prices") laid over the shipped prices per model. */
    PRICES_FILE: z.string().min(1).optional(),
    /** What a send to an agent is taken to spend, in tokens, before one of its sends has been seen. */
    BUDGET_ESTIMATE_TOKENS: z.coerce.number().int().min(1).max(10_000_000).default(1000),
    /** Behind a proxy that sets X-Forwarded-Proto, trust it to say whether the caller came over https. */
    TRUST_PROXY: env.flag("false"),
    LOG_LEVEL: env.logLevel(),
    LOG_FORMAT: env.logFormat(),
    ...metricsEnv,
  })
  .refine((value) => (value.OIDC_ISSUER === undefined) === (value.OIDC_CLIENT_ID === undefined), {
    message:
      "OIDC_ISSUER and OIDC_CLIENT_ID are set together (with OIDC_CLIENT_SECRET for a confidential client)",
    path: ["OIDC_CLIENT_ID"],
  })
  .transform((value, ctx) => {
    let PRICES: PriceTable = DEFAULT_PRICE_TABLE;
    try {
      PRICES = loadPrices(value.PRICES_FILE);
    } catch (error) {
      ctx.addIssue({ code: "custom", path: ["PRICES_FILE"], message: (error as Error).message });
      return z.NEVER;
    }
    return { ...value, PUBLIC_BASE_URL: publicOrigin(value), PRICES };
  });

export type GatewayConfig = z.infer<typeof gatewayEnvSchema>;

/** Parses the gateway's variables. */
export function loadGatewayConfig(source: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return parseEnv(gatewayEnvSchema, source);
}
