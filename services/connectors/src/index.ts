export {
  type ConnectorSettings,
  type ConnectorsConfig,
  connectorSettingsSchema,
  connectorsEnvSchema,
  loadConfig as loadConnectorsConfig,
  loadConnectorSettings,
} from "./config.js";
export { type BuildConnectorsOptions, buildConnectors, type Connectors } from "./connectors.js";
export { type Delivery, deliverReply, type SendFailure } from "./delivery.js";
export { type DiscordOptions, discordDriver } from "./discord/connector.js";
export {
  answers,
  type ClientConfig,
  clientTypes,
  PLATFORM_SECRETS,
  type Platform,
  RUN_PLATFORMS,
  runClients,
} from "./domain/clients.js";
export { MESSAGE_LIMITS, splitReply } from "./domain/split.js";
export {
  APOLOGY,
  BUDGET_SPENT,
  CLIENT_AUTH_FAILED,
  type ClientState,
  type ClientStatus,
} from "./domain/status.js";
export { markdownToSlack } from "./format/slack.js";
export { escapeHtml, markdownToTelegramHtml } from "./format/telegram.js";
export { type ConnectorFailure, ConnectorMetrics } from "./metrics.js";
export type { Connector, ConnectorContext, PlatformDriver, RunTurn, TurnRequest } from "./platform.js";
export { type SlackOptions, slackDriver, slackSignature } from "./slack/connector.js";
export { type ConnectorStoreOptions, openConnectorStore } from "./store/open.js";
export type * from "./store/types.js";
export { ConnectorSupervisor, type SupervisorOptions } from "./supervisor.js";
export { retryAfterRateLimit, type TelegramOptions, telegramDriver } from "./telegram/connector.js";
