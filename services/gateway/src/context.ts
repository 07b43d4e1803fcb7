import type { BudgetLedger, Charge } from "@agentry/budgets";
import type { Limits, PriceTable, Role, Scope, Tier } from "@agentry/core";
import type { Logger } from "@agentry/logging";
import type { Metrics } from "@agentry/observability";
import type { Catalogue } from "@agentry/plugin-kit";
import type {
  AccountService,
  AgentService,
  BudgetService,
  ConnectorService,
  ConversationService,
  IdempotencyService,
  PluginService,
  WebhookService,
} from "@agentry/proto";
import type { Client } from "@connectrpc/connect";
import type { GatewayConfig } from "./config.js";
import type { Authenticator } from "./http/auth.js";
import type { ConsoleSessions } from "./http/console-session.js";
import type { IdempotentRequest } from "./http/idempotency.js";
import type { KeyUsageRecorder } from "./http/key-usage.js";
import type { ProviderCatalog } from "./providers.js";
import type { RedisTaskStore } from "./standard/a2a-tasks.js";

/**
 * Who made a request, for records of who changed what: the member of a console session, or the API key (with the
 * member who created it, when one did).
 */
export type Actor = { type: "member"; id: string } | { type: "key"; id: string; createdBy: string | null };

/** The caller, as established by its API key or by a console session. */
export interface Principal {
  /** The key the request came with; empty for a console session. */
  keyId: string;
  /** The console session the request came with, when it came with one instead of a key. */
  sessionId?: string;
  /** A console session's member, and their role, whose scopes the session holds. */
  member?: { id: string; role: Role };
  /** Who made the request. */
  actor: Actor;
  accountId: string;
  /** Every scope the key (or the session's member's role) holds in this version. */
  scopes: ReadonlySet<Scope>;
  /** Created without scopes: it holds every scope, and the keys it creates without scopes do too. */
  fullAccess: boolean;
  tier: Tier;
  limits: Limits;
}

/** What the middleware chain records on `ctx.state` for the handlers after it. */
export interface GatewayState {
  requestId: string;
  principal?: Principal;
  /** Set when the request runs under an Idempotency-Key it has claimed. */
  idempotency?: IdempotentRequest;
  /**
   * Set while the request holds one of the agent's concurrency slots: keeps the slot beyond the response, until
   * `work` settles (a background message, which counts until it ends).
   */
  holdSlotUntil?: (work: Promise<unknown>) => void;
  /** Set on a send some budget counts: settled with the reply's usage (docs/api/budgets.md). */
  spend?: Charge;
}

/** Everything the gateway's handlers use, built once by the composition root (`compose.ts`). */
export interface GatewayContext {
  config: GatewayConfig;
  logger: Logger;
  agents: Client<typeof AgentService>;
  accounts: Client<typeof AccountService>;
  idempotency: Client<typeof IdempotencyService>;
  conversations: Client<typeof ConversationService>;
  webhooks: Client<typeof WebhookService>;
  /** Agents' platform clients; absent when no connectors service is configured (nothing runs them then). */
  connectors?: Client<typeof ConnectorService>;
  /** Accounts' spend budgets (the registry's BudgetService). */
  budgets: Client<typeof BudgetService>;
  /** What each budget has spent this period, and the reservations of sends under way. */
  ledger: BudgetLedger;
  /** Prices per model, for spend in usage and budgets (PRICES_FILE over the shipped ones). */
  prices: PriceTable;
  /** Agents' secrets (the registry's PluginService). */
  plugins: Client<typeof PluginService>;
  /** The plugins this deployment installs: `GET /v1/plugins` lists them, agents' `plugins` are checked against them. */
  catalogue: Catalogue;
  /** The model providers the conversation service serves, cached; agents are checked against them. */
  providers: ProviderCatalog;
  auth: Authenticator;
  /** Console sessions: signed in by link, carried by a cookie. */
  sessions: ConsoleSessions;
  /** Batches API key last-use times. */
  keyUsage: KeyUsageRecorder;
  /** This process's Prometheus metrics; absent when METRICS_PORT is unset (nothing is then collected). */
  metrics?: Metrics;
  /**
   * A2A tasks in the Redis the gateways share (when REDIS_URL is set), so any gateway reads and cancels them;
   * absent, each gateway keeps its own in memory.
   */
  a2aTasks?: RedisTaskStore;
  /** Whether each service and store the gateway calls answers now, as `/readyz` reports it. */
  dependencies(): Promise<Record<string, "up" | "down">>;
  /** Set once SIGTERM arrives: readiness fails and responses ask clients to reconnect elsewhere. */
  draining: boolean;
}
