export {
  type BuildConversationOptions,
  buildConversation,
  type Conversation,
  DEFAULT_TURN_TIMEOUT_MS,
} from "./build.js";
export { type ConversationConfig, DEFAULT_CONTEXT_TOKEN_BUDGET, loadConversationConfig } from "./config.js";
export type { ConversationContext, ConversationLimits } from "./context.js";
export { CHUNKS_CONSIDERED, newDocument } from "./documents.js";
export {
  createEmbedder,
  createOpenAIEmbedder,
  DEFAULT_EMBEDDINGS_MODEL,
  type Embedder,
  type EmbeddingsConfig,
} from "./embeddings.js";
export { messageCompleted, messageFailed, publicEvent, replyView } from "./events.js";
export {
  EXTRACTION_PROMPT,
  extractionMessage,
  KNOWN_MEMORIES_SHOWN,
  MEMORIES_RECALLED,
  newMemory,
} from "./memories.js";
export { MemoryVectors } from "./memory-vectors.js";
export { DEFAULT_LOCAL_MODEL, type ModelDescriptor, type ModelSource } from "./models/catalog.js";
export { ensureModel, LocalModelError, type ModelLocation, sharedModelDir } from "./models/resolve.js";
export { buildPrompt, systemPrompt } from "./prompt.js";
export { isLastingFailure } from "./providers/errors.js";
export {
  LOCAL_DEFAULT_TEMPERATURE,
  LOCAL_DEFAULT_TOP_P,
  LOCAL_REPEAT_PENALTY,
} from "./providers/local/engine.js";
export { LoopDetector } from "./providers/local/repetition.js";
export {
  createLocalProvider,
  DEFAULT_LOCAL_MAX_QUEUE,
  DEFAULT_LOCAL_MAX_TOKENS,
  DEFAULT_LOCAL_REPLY_TIMEOUT_MS,
  type LocalProvider,
  type LocalProviderOptions,
  type LocalProviderStats,
} from "./providers/local.js";
export { createOpenAIProvider } from "./providers/openai.js";
export {
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  type LocalConfig,
  type ProvidersConfig,
} from "./providers/resolve.js";
export { conversationRoutes, DEFAULT_TURN_PAGE_SIZE, MAX_TURN_PAGE_SIZE } from "./routes.js";
export { type AgentDirectory, CATCH_UP_MS, NEXT_FIRES_SHOWN, registryAgents } from "./schedules.js";
export type { GenerationSettings } from "./settings.js";
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
  HistoryLimits,
  HistoryTurn,
  KeyedExchange,
  MessageEventType,
  NewExchange,
  NewOutboxEvent,
  OutboxEvent,
  PurgeResult,
  TurnPage,
  TurnRecord,
  TurnRole,
} from "./store/types.js";
export { storedMessageJson } from "./stored-messages.js";
export {
  MAX_TOOL_OUTPUT,
  modelToolName,
  type PluginRuntime,
  type ToolCallRecord,
} from "./tools.js";
export {
  planUsage,
  USAGE_DIMENSIONS,
  USAGE_GRANULARITIES,
  type UsageDimension,
  type UsageFigures,
  type UsageGranularity,
  type UsageGroup,
  type UsageReport,
  type UsageRequest,
} from "./usage.js";
