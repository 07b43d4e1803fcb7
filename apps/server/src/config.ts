import { fileURLToPath } from "node:url";
import { env, parseEnv, z } from "@agentry/config";
import { type ConnectorSettings, loadConnectorSettings } from "@agentry/connectors";
import { type ConversationConfig, loadConversationConfig } from "@agentry/conversation";
import { type GatewayConfig, loadGatewayConfig } from "@agentry/gateway";
import { loadWebhooksConfig, type WebhooksConfig } from "@agentry/webhooks";

/** The variables of the services the server embeds, beyond the gateway's. */
const storeEnvSchema = z.object({
  DATA_DIR: env.dataDir(),
  DATABASE_URL: env.databaseUrl(),
  /** Agent secrets are sealed with it; unset, the embedded registry generates one into DATA_DIR (secrets.key). */
  SECRETS_KEY: env.optional(env.sealingKey()),
  AUDIT_RETENTION_DAYS: env.auditRetentionDays(),
});

/**
 * The web console's build (apps/console/dist, made by `pnpm install` and `pnpm start`), found by its place in the
 * repository: this file and the bundle made of it both sit two levels under apps/server.
 */
const CONSOLE_BUILD = fileURLToPath(new URL("../../console/dist", import.meta.url));

export interface ServerConfig {
  gateway: GatewayConfig;
  /** Where the embedded services keep their SQLite files (and the local model). */
  dataDir: string;
  /** Postgres for the embedded services' stores; absent: SQLite in `dataDir`. */
  databaseUrl?: string;
  /** SECRETS_KEY of the embedded registry; absent, the key generated into `dataDir` (see `keyInDataDir`). */
  secretsKey?: string;
  /** AUDIT_RETENTION_DAYS of the embedded registry (the other embedded services read it from their own configuration). */
  auditRetentionDays?: number;
  /** The embedded conversation service's configuration; absent when CONVERSATION_URL is set. */
  conversation?: ConversationConfig;
  /** The embedded webhooks service's configuration; absent when WEBHOOKS_URL is set. */
  webhooks?: WebhooksConfig;
  /** The embedded connectors' settings; absent when CONNECTORS_URL is set. */
  connectors?: ConnectorSettings;
}

/**
 * The gateway's variables, and those of each service embedded: the registry unless REGISTRY_URL is set, the
 * conversation service unless CONVERSATION_URL is set, the webhooks service unless WEBHOOKS_URL is set, the
 * connectors unless CONNECTORS_URL is set.
 */
export function loadServerConfig(source: NodeJS.ProcessEnv = process.env): ServerConfig {
  const gateway = loadGatewayConfig({ ...source, CONSOLE_DIR: source.CONSOLE_DIR ?? CONSOLE_BUILD });
  const stores = parseEnv(storeEnvSchema, source);
  return {
    gateway,
    dataDir: stores.DATA_DIR,
    auditRetentionDays: stores.AUDIT_RETENTION_DAYS,
    ...(stores.DATABASE_URL ? { databaseUrl: stores.DATABASE_URL } : {}),
    ...(stores.SECRETS_KEY ? { secretsKey: stores.SECRETS_KEY } : {}),
    ...(gateway.CONVERSATION_URL
      ? {}
      : { conversation: loadConversationConfig({ ...source, DATA_DIR: stores.DATA_DIR }) }),
    ...(gateway.WEBHOOKS_URL
      ? {}
      : { webhooks: loadWebhooksConfig({ ...source, DATA_DIR: stores.DATA_DIR }) }),
    ...(gateway.CONNECTORS_URL ? {} : { connectors: loadConnectorSettings(source) }),
  };
}
