import { randomUUID } from "node:crypto";
import type { Logger } from "@agentry/logging";
import { type Metrics, traceMethods } from "@agentry/observability";
import { AccountService, AgentService, ConversationService, PluginService } from "@agentry/proto";
import { type ConnectRouter, createClient, type Transport } from "@connectrpc/connect";
import { discordDriver } from "./discord/connector.js";
import type { ClientStatus } from "./domain/status.js";
import { ConnectorMetrics } from "./metrics.js";
import type { PlatformDriver } from "./platform.js";
import { connectorsRoutes } from "./rpc/routes.js";
import { slackDriver } from "./slack/connector.js";
import { openConnectorStore } from "./store/open.js";
import type { Clock, ConnectorStore } from "./store/types.js";
import { ConnectorSupervisor } from "./supervisor.js";
import { telegramDriver } from "./telegram/connector.js";

export interface Connectors {
  store: ConnectorStore;
  /** This process's name as holder of pollers' leases. */
  holder: string;
  /** Every RPC the service serves (ListClients). */
  routes: (router: ConnectRouter) => void;
  /** The state of each of the agent's clients (the types its `clients` names). */
  clients(agentId: string, types: readonly string[]): ClientStatus[];
  /** Reads agents again now, e.g. after an agent or secret changed. */
  refresh(): Promise<void>;
  /** Whether the store answers a trivial query. */
  ready(): Promise<boolean>;
  /** Stops every connector (the message in hand is answered first) and closes the store. */
  close(): Promise<void>;
}

export interface BuildConnectorsOptions {
  dataDir: string;
  /** A Postgres URL (DATABASE_URL) for the store; without it, SQLite in `dataDir`. */
  databaseUrl?: string | undefined;
  logger: Logger;
  /** Where agents and their secrets are read. */
  registry: Transport;
  /** Where turns are sent. */
  conversation: Transport;
  /** PUBLIC_BASE_URL: the gateway's public origin, where platforms push updates in webhook mode. */
  publicBaseUrl?: string | undefined;
  /** TELEGRAM_API_URL: the Bot API's root; Telegram's own by default. */
  telegramApiUrl?: string | undefined;
  /** SLACK_API_URL: the Slack Web API's root; Slack's own by default. */
  slackApiUrl?: string | undefined;
  /** DISCORD_API_URL: the Discord REST API's root; Discord's own by default. */
  discordApiUrl?: string | undefined;
  /** DISCORD_GATEWAY_URL: the Discord gateway; the one Discord names by default. */
  discordGatewayUrl?: string | undefined;
  syncIntervalMs?: number;
  leaseMs?: number;
  rpcTimeoutMs?: number;
  /** How long one Telegram long poll waits, in seconds (25 by default). */
  telegramPollTimeoutSeconds?: number;
  /** The platforms run; Telegram, Discord and Slack by default. */
  drivers?: readonly PlatformDriver[];
  /** The process's metrics: the connectors' per-platform metrics join its registry. */
  metrics?: Metrics | undefined;
  clock?: Clock;
}

/**
 * The connectors service's composition root: its store, the platforms it runs, and the supervisor that keeps one
 * connector per agent and platform. The all-in-one server calls it as the service's own `main` does.
 */
export async function buildConnectors(options: BuildConnectorsOptions): Promise<Connectors> {
  const { logger } = options;
  const store = traceMethods(
    await openConnectorStore({
      dataDir: options.dataDir,
      databaseUrl: options.databaseUrl,
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
    }),
    "connectors.store",
  );
  const holder = `connectors-${randomUUID()}`;
  const drivers = options.drivers ?? [
    telegramDriver({
      apiRoot: options.telegramApiUrl,
      ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
      ...(options.telegramPollTimeoutSeconds !== undefined
        ? { pollTimeoutSeconds: options.telegramPollTimeoutSeconds }
        : {}),
    }),
    discordDriver({
      apiUrl: options.discordApiUrl,
      gatewayUrl: options.discordGatewayUrl,
      ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    }),
    slackDriver({ apiUrl: options.slackApiUrl }),
  ];
  const supervisor = new ConnectorSupervisor({
    accounts: createClient(AccountService, options.registry),
    agents: createClient(AgentService, options.registry),
    secrets: createClient(PluginService, options.registry),
    conversations: createClient(ConversationService, options.conversation),
    store,
    drivers,
    logger,
    holder,
    publicBaseUrl: options.publicBaseUrl,
    metrics: new ConnectorMetrics(options.metrics?.registry),
    ...(options.syncIntervalMs !== undefined ? { syncIntervalMs: options.syncIntervalMs } : {}),
    ...(options.rpcTimeoutMs !== undefined ? { rpcTimeoutMs: options.rpcTimeoutMs } : {}),
  });
  supervisor.start();
  let closed: Promise<void> | undefined;
  return {
    store,
    holder,
    routes: connectorsRoutes(supervisor),
    clients: (agentId, types) => supervisor.clients(agentId, types),
    refresh: () => supervisor.kick(),
    ready: () => store.ping(),
    close() {
      closed ??= supervisor.stop().then(() => store.close());
      return closed;
    },
  };
}
