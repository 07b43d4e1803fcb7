import type { Logger } from "@agentry/logging";
import type { ClientConfig, Platform } from "./domain/clients.js";
import type { ClientStatus } from "./domain/status.js";
import type { ConnectorMetrics } from "./metrics.js";
import type { ConnectorStore } from "./store/types.js";

/** One inbound platform message, turned into a conversation turn. */
export interface TurnRequest {
  text: string;
  /** `<platform>:<user id>` */
  userId: string;
  /** `<platform>:<chat or channel id>` */
  roomId: string;
  source: { platform: Platform; chatId: string; messageId: string; username: string | null };
  /** Identifies the platform message across processes: the turn is stored once under it. */
  messageKey: string;
}

/** The reply's text, or undefined when the turn failed (the caller then sends the apology). */
export type RunTurn = (request: TurnRequest) => Promise<string | undefined>;

/** What the service gives each connector it starts. */
export interface ConnectorContext {
  agentId: string;
  config: ClientConfig;
  /** The agent secrets the platform needs (`PLATFORM_SECRETS`), all present. */
  secrets: Readonly<Record<string, string>>;
  store: ConnectorStore;
  /** Messages in, replies out, failures and lag, per platform. */
  metrics?: ConnectorMetrics;
  runTurn: RunTurn;
  logger: Logger;
  /** This process, as lease holder. */
  holder: string;
  /** Where the platform pushes this agent's updates (webhook mode): the gateway's connector route. */
  webhookUrl: string | undefined;
  /** The platform rejected the credentials: the service marks the agent `error` and stops the connector. */
  authFailed(message: string): void;
  /** The platform accepted the credentials: an agent in `error` for them is active again. */
  authAccepted(): void;
}

/** A running platform session for one agent. */
export interface Connector {
  status(): ClientStatus;
  /**
   * Handles an update the platform pushed to the gateway, once `secretToken` proves it came from the platform;
   * throws UNAUTHORIZED otherwise. Absent for connectors that only poll or hold a session.
   */
  receive?(secretToken: string, body: string): Promise<void>;
  /** Stops taking messages and waits for the one in hand to be answered or given up. */
  stop(): Promise<void>;
}

/** One platform the service runs: Telegram now; Discord and Slack implement the same. */
export interface PlatformDriver {
  type: Platform;
  start(context: ConnectorContext): Connector;
}
