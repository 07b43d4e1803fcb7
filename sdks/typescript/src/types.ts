/**
 * The models of the Agentry REST API, field for field as they travel on the wire (camelCase JSON). Timestamps
 * are ISO 8601 strings; identifiers are opaque prefixed strings (`agt_`, `msg_`, `key_`, `req_`).
 */

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** The status of an agent. `error` is set by the service only, when a model call fails for a lasting reason. */
export type AgentStatus = "active" | "inactive" | "error";

/** The model providers the service supports. */
export type ModelProvider = "openai" | "anthropic" | "local";

/** A platform integration: a platform name (`"discord"`) or an object with a `type` and its configuration. */
export type AgentClient = string | { type: string; [setting: string]: unknown };

/** A plugin: a plugin name or `{ name, enabled?, config? }`. */
export type AgentPlugin = string | { name: string; enabled?: boolean; config?: Record<string, unknown> };

/** Why an agent is in the `error` status. */
export interface AgentStatusReason {
  /** The error code of the failure, e.g. `MODEL_ERROR`. */
  code: string;
  message: string;
  /** When it happened (ISO 8601). */
  at: string;
}

/** The complete agent record, as returned by create, get, list and update. */
export interface Agent {
  /** `agt_` followed by a ULID. */
  id: string;
  name: string;
  bio: string[];
  personality: JsonObject;
  knowledge: string[];
  goals: string[];
  clients: AgentClient[];
  settings: JsonObject;
  /** `null` means the server's default provider, resolved when a message is sent. */
  modelProvider: ModelProvider | null;
  /** `null` means the provider's default model. */
  model: string | null;
  plugins: AgentPlugin[];
  status: AgentStatus;
  /** Set while `status` is `error`, otherwise `null`. */
  statusReason: AgentStatusReason | null;
  createdAt: string;
  updatedAt: string;
  /** Absolute URL of this agent's messages endpoint. */
  apiEndpoint: string;
}

/** The fields of a new agent. Only `name` is required; omitted lists and objects start empty. */
export interface AgentCreateParams {
  /** 1 to 200 characters after trimming. */
  name: string;
  bio?: string[];
  personality?: Record<string, unknown>;
  knowledge?: string[];
  goals?: string[];
  clients?: AgentClient[];
  settings?: Record<string, unknown>;
  modelProvider?: ModelProvider;
  model?: string;
  plugins?: AgentPlugin[];
}

/**
 * A partial update: only the fields given change. `null` for `modelProvider` or `model` resets it to the
 * server's default. `status` may be set to `active` or `inactive` (never `error`).
 */
export interface AgentUpdateParams {
  name?: string;
  bio?: string[];
  personality?: Record<string, unknown>;
  knowledge?: string[];
  goals?: string[];
  clients?: AgentClient[];
  settings?: Record<string, unknown>;
  modelProvider?: ModelProvider | null;
  model?: string | null;
  plugins?: AgentPlugin[];
  status?: "active" | "inactive";
}

/** Query parameters of the agent listing. */
export interface AgentListParams {
  /** Page number, from 1 (default 1). */
  page?: number;
  /** Page size, 1 to 100 (default 20). */
  limit?: number;
  /** Only agents with this status. */
  status?: AgentStatus;
  /** Default `createdAt`; ties are broken by id. */
  sortBy?: "createdAt" | "name" | "status";
  /** Default `desc`. */
  order?: "asc" | "desc";
}

/** Where a page sits in the whole listing. */
export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
  hasMore: boolean;
}

/** The answer to a delete. */
export interface AgentDeleted {
  id: string;
  deleted: true;
}

/** A message to an agent. */
export interface MessageSendParams {
  /** 1 to 100,000 characters. */
  text: string;
  /** The user, for conversation continuity: context is kept per agent, user and room. */
  userId?: string;
  /** The conversation room, for multi-user conversations. */
  roomId?: string;
  /** Extra context for this turn only (any JSON object); it reaches the model but is not kept as history. */
  context?: Record<string, unknown>;
}

/** Tokens spent by one reply. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** The agent's reply to a message (also the data of the `message.completed` event). */
export interface MessageReply {
  /** `msg_` followed by a ULID. */
  id: string;
  agentId: string;
  userId: string | null;
  roomId: string | null;
  text: string;
  model: string;
  modelProvider: string;
  finishReason: string;
  usage: Usage;
  latencyMs: number;
  createdAt: string;
}

/** The data of `message.started`: the ids of the reply being streamed. */
export interface MessageStarted {
  id: string;
  agentId: string;
  userId: string | null;
  roomId: string | null;
}

/** The data of `message.delta`: the next piece of the reply's text. */
export interface MessageDelta {
  text: string;
}

/** The data of a stream's `error` event; the stream's iterator throws it as an `APIError` subclass. */
export interface StreamErrorData {
  code: string;
  message: string;
}

/** `message.started`: the reply has begun. Always the first event. */
export interface MessageStartedEvent {
  type: "message.started";
  /** The event's sequence number in the stream, as sent in the SSE `id:` field. */
  id: string;
  data: MessageStarted;
}

/** `message.delta`: a piece of text; the deltas concatenated are the reply's text. */
export interface MessageDeltaEvent {
  type: "message.delta";
  id: string;
  data: MessageDelta;
}

/** `message.completed`: the whole reply, as the non-streaming call returns it. Always the last event. */
export interface MessageCompletedEvent {
  type: "message.completed";
  id: string;
  data: MessageReply;
}

/**
 * The events a message stream yields, in order: one `message.started`, any number of `message.delta`, one
 * `message.completed`. A stream that fails instead ends with an `error` event, which the iterator throws.
 */
export type MessageStreamEvent = MessageStartedEvent | MessageDeltaEvent | MessageCompletedEvent;

/** A permission an API key can hold. */
export type ApiKeyScope =
  | "agents:read"
  | "agents:write"
  | "agents:delete"
  | "messages:send"
  | "keys:manage"
  | "history:read"
  | "history:delete"
  | "usage:read"
  | "webhooks:manage"
  | "plugins:manage";

/** An API key record. The secret itself is shown only once, by `apiKeys.create`. */
export interface ApiKey {
  /** `key_` followed by a ULID. */
  id: string;
  name: string;
  /** The first characters of the secret, to recognise it. */
  prefix: string;
  /** Every scope the key holds now. */
  scopes: ApiKeyScope[];
  /** Created without scopes: the key also holds every scope added in later versions. */
  fullAccess: boolean;
  createdAt: string | null;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

/** A new API key with its secret, which cannot be read again. */
export interface ApiKeyCreated extends ApiKey {
  /** The secret to send as `Authorization: Bearer <key>`. */
  key: string;
}

/** The fields of a new API key. */
export interface ApiKeyCreateParams {
  /** A label, up to 200 characters. */
  name?: string;
  /**
   * The scopes to grant. By default what the calling key holds: a full-access key makes a full-access key, any
   * other key one with exactly its own scopes. A key cannot grant more than it holds.
   */
  scopes?: ApiKeyScope[];
  /** When the key stops working; must be in the future. */
  expiresAt?: string | Date;
}

/** The answer to a revocation. */
export interface ApiKeyRevoked {
  id: string;
  revoked: true;
}

/** The rate-limit state reported by the last response (`X-RateLimit-*`): the bucket with the least left. */
export interface RateLimitInfo {
  /** Requests allowed per window in that bucket. */
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** When the bucket is full again. */
  resetAt: Date;
}

/** The types of the events the service delivers to webhook endpoints. */
export type WebhookEventType =
  | "agent.created"
  | "agent.updated"
  | "agent.status_changed"
  | "agent.deleted"
  | "message.completed"
  | "message.failed"
  | "webhook.test";

/** The body of a webhook delivery: one event, the same on every retry of it. */
interface WebhookEventBase<Type extends WebhookEventType, Data> {
  /** `evt_` followed by a ULID; also the `webhook-id` header, so a receiver can drop a delivery it has seen. */
  id: string;
  type: Type;
  /** When the event happened (ISO 8601). */
  createdAt: string;
  data: Data;
}

/** The data of `agent.deleted`. */
export interface AgentDeletedWebhookData {
  /** The deleted agent's id. */
  id: string;
}

/** The data of `message.failed`: a send that ended with an error instead of a reply. */
export interface MessageFailedWebhookData {
  agentId: string;
  messageId: string;
  /** The error code of the failure, e.g. `MODEL_ERROR`. */
  code: string;
  message: string;
}

/** `agent.created`: an agent was created; `data` is the agent. */
export type AgentCreatedWebhookEvent = WebhookEventBase<"agent.created", Agent>;
/** `agent.updated`: an agent was changed (every update); `data` is the agent as it now is. */
export type AgentUpdatedWebhookEvent = WebhookEventBase<"agent.updated", Agent>;
/** `agent.status_changed`: an agent's `status` changed, by an update or by the service; `data` is the agent. */
export type AgentStatusChangedWebhookEvent = WebhookEventBase<"agent.status_changed", Agent>;
/** `agent.deleted`: an agent was deleted; `data` is its id. */
export type AgentDeletedWebhookEvent = WebhookEventBase<"agent.deleted", AgentDeletedWebhookData>;
/** `message.completed`: a reply is complete; `data` is the reply. */
export type MessageCompletedWebhookEvent = WebhookEventBase<"message.completed", MessageReply>;
/** `message.failed`: a reply failed; `data` says which and why. */
export type MessageFailedWebhookEvent = WebhookEventBase<"message.failed", MessageFailedWebhookData>;
/** `webhook.test`: sent when asked for, to check an endpoint; `data` has no fixed shape. */
export type WebhookTestEvent = WebhookEventBase<"webhook.test", JsonObject>;

/**
 * An event delivered to a webhook endpoint, as `webhooks.unwrap` returns it; `type` tells which, and narrows
 * `data`. An event of a type newer than this SDK is returned as it came, so leave room for other types.
 */
export type WebhookEvent =
  | AgentCreatedWebhookEvent
  | AgentUpdatedWebhookEvent
  | AgentStatusChangedWebhookEvent
  | AgentDeletedWebhookEvent
  | MessageCompletedWebhookEvent
  | MessageFailedWebhookEvent
  | WebhookTestEvent;
