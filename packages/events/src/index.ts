export {
  type AgentDeletedData,
  type AgentJson,
  type AgentStatusName,
  type AgentView,
  agentDeletedData,
  agentEndpoint,
  agentEventData,
  presentAgent,
} from "./agent.js";
export {
  type MessageFailedData,
  messageCompletedData,
  messageFailedData,
  presentReply,
  type ReplyJson,
  type ReplyView,
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
