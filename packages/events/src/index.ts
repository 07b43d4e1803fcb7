export {
  type AgentDeletedData,
  type AgentJson,
  type AgentStatusName,
  type AgentView,
  agentDeletedData,
  agentEndpoint,
  agentEventData,
  agentPublicText,
  presentAgent,
  withApiEndpoint,
} from "./agent.js";
export { type BudgetThresholdData, budgetThresholdEventId } from "./budgets.js";
export {
  type CitationJson,
  presentCitation,
  presentStoredMessage,
  type StoredMessageJson,
  type StoredMessageView,
} from "./history.js";
export {
  type MessageFailedData,
  type MessageRequiresActionData,
  messageCompletedData,
  messageFailedData,
  messageRequiresActionData,
  presentReply,
  presentToolCall,
  type ReplyJson,
  type ReplyView,
  type ToolCallJson,
  type ToolCallView,
  toolCallStarted,
} from "./messages.js";
export {
  type EventType,
  isPublishedEventType,
  type JsonObject,
  type JsonValue,
  PUBLISHED_EVENT_TYPES,
  type PublicEvent,
  type PublishedEventType,
  TEST_EVENT_TYPE,
} from "./types.js";
