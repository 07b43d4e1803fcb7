export { type BuildConversationOptions, buildConversation, type Conversation } from "./build.js";
export { type ConversationConfig, DEFAULT_CONTEXT_TOKEN_BUDGET, loadConversationConfig } from "./config.js";
export type { ConversationContext, ConversationLimits } from "./context.js";
export { isLastingFailure } from "./providers/errors.js";
export {
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  NO_PROVIDER_MESSAGE,
  type ProvidersConfig,
} from "./providers/resolve.js";
export { isProviderName, PROVIDER_NAMES, type ProviderName } from "./providers/types.js";
export { conversationRoutes, DEFAULT_TURN_PAGE_SIZE, MAX_TURN_PAGE_SIZE } from "./routes.js";
export { type ConversationServer, createConversationServer } from "./server.js";
export { MAX_TEXT_CHARS } from "./service.js";
export { GENERATION_BOUNDS, type GenerationSettings, generationSettingsIssues } from "./settings.js";
export { openConversationStore } from "./store/open.js";
export {
  CONVERSATION_DB_FILE,
  openSqliteConversationStore,
  SqliteConversationStore,
} from "./store/sqlite.js";
export type {
  CallOutcome,
  CallRecord,
  ConversationKey,
  ConversationStore,
  NewExchange,
  PurgeResult,
  TurnPage,
  TurnRecord,
  TurnRole,
} from "./store/types.js";
