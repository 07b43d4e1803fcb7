/**
 * The models of the Agentry REST API, field for field as they travel on the wire (camelCase JSON). Timestamps
 * are ISO 8601 strings; identifiers are opaque prefixed strings (`agt_`, `msg_`, `conv_`, `key_`, `whk_`, `dlv_`,
 * `evt_`, `req_`).
 */

import type { RequestOptions } from "./core.js";
import type { FieldIssue } from "./errors.js";

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
export type AgentPlugin =
  | string
  | {
      name: string;
      enabled?: boolean;
      config?: Record<string, unknown>;
      /**
       * Calls of these tools wait for a person's approval before they run: `true` for all the plugin's tools, or
       * the names of some. The message is then `requires_action` until `messages.approve` answers.
       */
      requireApproval?: boolean | string[];
    };

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
  /**
   * What this message does when its conversation has a message in progress: `reject` (409 `CONVERSATION_BUSY`,
   * a `ConflictError`), `enqueue` (answered after it, in the order messages came) or `interrupt` (the one in
   * progress is cancelled: its reply is kept with the text it had, `finishReason: "cancelled"`). Default: the
   * agent's `settings.concurrentMessages`, else `enqueue`.
   */
  onConflict?: ConflictMode;
}

/** What a message does when its conversation has a message in progress (`onConflict`). */
export type ConflictMode = "reject" | "enqueue" | "interrupt";

/** What `stream` takes besides the message. */
export interface MessageStreamParams extends MessageSendParams {
  /**
   * What the service does when the connection goes away before the reply is complete. `continue` (the SDK's
   * default) generates the whole reply and stores it, so that a dropped stream can be resumed; `cancel` stops it,
   * so that `abort()` also stops the model (a dropped stream then ends with an error instead of resuming).
   */
  onDisconnect?: "cancel" | "continue";
}

/** A tool call the model made that waits for a person's approval before it runs. */
export interface PendingToolCall {
  /** What `messages.approve` names. */
  id: string;
  /** As the model called it: `<plugin>__<tool>`. */
  tool: string;
  /** The arguments as JSON text, as the model wrote them. */
  arguments: string;
}

/**
 * A message accepted without its reply: `pending` when sent in the background; `requires_action` when a send
 * paused before tool calls that wait for approval (answer them with `messages.approve`).
 */
export interface BackgroundMessageAccepted {
  /** The id the reply will carry: what `getBackground` takes. */
  id: string;
  status: "pending" | "requires_action";
  /** `requires_action` only: the calls to approve or refuse. */
  pendingToolCalls?: PendingToolCall[];
}

/** A person's answer to tool calls a message paused before. */
export interface MessageApproveParams {
  /** The pending calls this answer decides. */
  toolCallIds: string[];
  /** `true`: they run; `false`: the model is told the person refused them. */
  approve: boolean;
  /** Given to the model with a refusal. */
  reason?: string;
}

/** How `waitForBackground` paces its reads, beside the options of each read. */
export interface BackgroundWaitOptions extends RequestOptions {
  /** Milliseconds before the first read again; each next pause is twice as long, at most 5 s. Default 500. */
  pollInterval?: number | undefined;
  /** Milliseconds to wait in all before throwing `APITimeoutError` (the message goes on). Default 600 000. */
  maxWait?: number | undefined;
}

/**
 * A background message while the service keeps its state (`STREAM_RETENTION` after it ends, 1 hour by default):
 * only the ids while `pending`, the whole reply once `completed`, the error once `failed`. `cancelled`: with the
 * reply (the text it had, `finishReason: "cancelled"`) when a later message interrupted it, with the error when
 * the kill switch stopped it.
 */
export type BackgroundMessage =
  | { id: string; agentId: string; userId: string | null; roomId: string | null; status: "pending" }
  | (MessageReply & { status: "completed" | "cancelled" })
  | {
      id: string;
      agentId: string;
      userId: string | null;
      roomId: string | null;
      status: "failed" | "cancelled";
      error: { code: string; message: string };
    }
  | {
      id: string;
      agentId: string;
      userId: string | null;
      roomId: string | null;
      status: "requires_action";
      /** The calls still waiting for an answer (`messages.approve`). */
      pendingToolCalls: PendingToolCall[];
      /** When the wait ends (ISO 8601); unanswered, the message then fails with `APPROVAL_EXPIRED`. */
      approvalExpiresAt: string;
    };

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
  /** The tools of the agent's plugins the model called during the turn, in order; absent when it called none. */
  toolCalls?: ToolCall[];
  /** The chunks of the agent's documents the prompt carried, best first; absent when it carried none. */
  citations?: Citation[];
}

/** A chunk of one of the agent's documents that a reply's prompt carried. */
export interface Citation {
  /** The document (`doc_…`). */
  documentId: string;
  /** The chunk's position in the document, from 0. */
  chunk: number;
  /** How well it matched, relative to the best passage of the reply (1). */
  score: number;
}

/** The data of `tool.call`: the model called a tool of the agent's plugins, which runs now. */
export interface ToolCallStarted {
  /** The call's id, as the model provider gave it. */
  id: string;
  /** The tool as the model called it: `<plugin>__<tool>`, e.g. `calculator__calculate`. */
  name: string;
  /** The arguments the model gave, as JSON. */
  arguments: unknown;
}

/**
 * One tool call of a turn with its outcome: the data of `tool.result` and an item of `toolCalls`. `ok` tells
 * which of `output` and `error` it carries.
 */
export type ToolCall = ToolCallStarted &
  (
    | {
        ok: true;
        /** The tool's answer. */
        output: unknown;
      }
    | {
        /** The tool failed, timed out or does not exist; the model was told why and answered without it. */
        ok: false;
        /** What the model was told. */
        error: string;
      }
  );

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

/** `tool.call`: the model called a tool of the agent's plugins; its `tool.result` follows. */
export interface ToolCallEvent {
  type: "tool.call";
  id: string;
  data: ToolCallStarted;
}

/** `tool.result`: a tool call's outcome, given to the model, which then goes on answering. */
export interface ToolResultEvent {
  type: "tool.result";
  id: string;
  data: ToolCall;
}

/** The data of `tool.approval_required`. */
export interface ToolApprovalRequired {
  /** The paused message: answer with `messages.approve(agentId, messageId, …)`. */
  messageId: string;
  pendingToolCalls: PendingToolCall[];
}

/**
 * `tool.approval_required`: the turn paused before tool calls that wait for a person's approval. The last event
 * of such a stream; the reply comes, in the background, once they are answered.
 */
export interface ToolApprovalRequiredEvent {
  type: "tool.approval_required";
  id: string;
  data: ToolApprovalRequired;
}

/** `message.completed`: the whole reply, as the non-streaming call returns it. Always the last event. */
export interface MessageCompletedEvent {
  type: "message.completed";
  id: string;
  data: MessageReply;
}

/**
 * The events a message stream yields, in order: one `message.started`, any number of `message.delta` (with
 * `tool.call` and `tool.result` between them when the model calls tools of the agent's plugins), one
 * `message.completed`. A stream that fails instead ends with an `error` event, which the iterator throws.
 */
export type MessageStreamEvent =
  | MessageStartedEvent
  | MessageDeltaEvent
  | ToolCallEvent
  | ToolResultEvent
  | ToolApprovalRequiredEvent
  | MessageCompletedEvent;

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
  | "plugins:manage"
  | "members:read"
  | "members:write"
  | "budgets:read"
  | "budgets:write"
  | "audit:read";

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
  /** The member who created the key (`usr_…`); `null` for a key the admin CLI made. */
  createdBy: string | null;
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
  | "message.requires_action"
  | "budget.threshold"
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

/** The data of `message.requires_action`: a message paused before tool calls that wait for approval. */
export interface MessageRequiresActionWebhookData {
  agentId: string;
  messageId: string;
  userId: string | null;
  roomId: string | null;
  pendingToolCalls: PendingToolCall[];
  /** When the wait ends (ISO 8601). */
  expiresAt: string;
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
/** `message.requires_action`: a message paused for tool approval; answer it with `messages.approve`. */
export type MessageRequiresActionWebhookEvent = WebhookEventBase<
  "message.requires_action",
  MessageRequiresActionWebhookData
>;

/** The data of `budget.threshold`: a budget's spend reached 50, 80 or 100 % of it this period. */
export interface BudgetThresholdWebhookData {
  budgetId: string;
  /** 50, 80 or 100. */
  threshold: 50 | 80 | 100;
  unit: BudgetUnit;
  period: BudgetPeriod;
  agentId: string | null;
  apiKeyId: string | null;
  /** In the budget's unit: tokens, or US dollars. */
  limit: number;
  spent: number;
  periodStart: string;
  resetsAt: string;
}

/** `budget.threshold`: a budget reached a threshold; sent once per threshold, budget and period. */
export type BudgetThresholdWebhookEvent = WebhookEventBase<"budget.threshold", BudgetThresholdWebhookData>;
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
  | MessageRequiresActionWebhookEvent
  | BudgetThresholdWebhookEvent
  | WebhookTestEvent;

/** Where a page of a cursor-paged list is (history, the delivery log). */
export interface CursorPagination {
  /** The page size asked for. */
  limit: number;
  /** Whether more items lie beyond this page in the direction of paging. */
  hasMore: boolean;
}

/**
 * The query every cursor-paged list takes. Cursors are ids of items of the same list: `before` asks for the
 * items just older than that one, `after` for those just newer; give at most one. An id that is not an item of
 * the list is refused (400).
 */
export interface CursorListParams {
  /** Page size, 1 to 100 (default 20). */
  limit?: number;
  /** Only items older than this one (its id). */
  before?: string;
  /** Only items newer than this one (its id). */
  after?: string;
}

/** Why a model stopped writing a reply. */
/** `cancelled`: a later message to the conversation interrupted the reply (`onConflict: "interrupt"`). */
export type FinishReason = "stop" | "length" | "content_filter" | "other" | "cancelled";

/** What every stored message has, whichever side wrote it. */
interface HistoryMessageBase {
  /** `msg_` followed by a ULID; an assistant message has the id its send call answered with. */
  id: string;
  agentId: string;
  /** The conversation it belongs to: `conv_` followed by a ULID. */
  conversationId: string;
  /** `null` for messages sent without a `userId`. */
  userId: string | null;
  /** `null` for messages sent without a `roomId`. */
  roomId: string | null;
  text: string;
  createdAt: string;
}

/** A message sent to the agent, as stored. */
export interface UserHistoryMessage extends HistoryMessageBase {
  role: "user";
}

/** The agent's reply, as stored, with what the send call reported about it. */
export interface AssistantHistoryMessage extends HistoryMessageBase {
  role: "assistant";
  /** The model that answered, as the provider names it. */
  model: string;
  modelProvider: ModelProvider;
  /** `null` for replies stored before the finish reason was recorded. */
  finishReason: FinishReason | null;
  usage: Usage;
  /** Milliseconds from receipt to the complete reply. */
  latencyMs: number;
  /** The tools the model called during the turn, in order; absent when it called none. */
  toolCalls?: ToolCall[];
  /** The chunks of the agent's documents the reply's prompt carried (assistant messages); absent when none. */
  citations?: Citation[];
}

/** A stored message of a conversation; `role` tells which side wrote it (and narrows the type). */
export type HistoryMessage = UserHistoryMessage | AssistantHistoryMessage;

/**
 * Query of an agent's stored messages. Filters combine: `userId` alone is that user's messages in every room,
 * `roomId` alone every user's in that room, both one conversation, as does `conversationId` (not with the
 * others); none: every message of the agent.
 */
export interface MessageListParams extends CursorListParams {
  /** Only the messages of this conversation (`conv_…`). */
  conversationId?: string;
  userId?: string;
  roomId?: string;
  /** `desc` (default): newest first; `asc`: oldest first. Cursors keep their meaning either way. */
  order?: "asc" | "desc";
}

/** The history of one agent with one `userId` in one `roomId`. */
export interface Conversation {
  /** `conv_` followed by a ULID, stable for the conversation's life. */
  id: string;
  agentId: string;
  /** `null` for the conversation of messages sent without a `userId`. */
  userId: string | null;
  /** `null` for the conversation of messages sent without a `roomId`. */
  roomId: string | null;
  /** Messages it holds, both roles. */
  messageCount: number;
  /** When its first message was stored. */
  createdAt: string;
  /** When its latest message was stored. */
  lastMessageAt: string;
}

/** Query of an agent's conversations, latest activity first. */
export interface ConversationListParams extends CursorListParams {
  /** Only this user's conversations (in every room). */
  userId?: string;
  /** Only the conversations in this room (of every user). */
  roomId?: string;
}

/**
 * Where a run stands; `requires_action`: paused until its tool calls are answered (`messages.approve`);
 * `cancelled`: stopped by `client.agents.runs.cancel`.
 */
export type AgentRunStatus = "pending" | "requires_action" | "completed" | "failed" | "cancelled";

/** One streamed or background message of an agent, while its record is kept. */
export interface AgentRun {
  /** The run's id, the list's cursor: the same as `messageId`. */
  id: string;
  /** The reply's id (a background message's `messageId`). */
  messageId: string;
  status: AgentRunStatus;
  /** Whether it was sent with `background: true` (else streamed). */
  background: boolean;
  userId: string | null;
  roomId: string | null;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601; null while pending. */
  endedAt: string | null;
  /** A failed or cancelled run's error. */
  error: { code: string; message: string } | null;
  /** How many times another process took it over after the one generating it stopped. */
  takeovers: number;
}

export interface AgentRunListParams extends CursorListParams {
  /** Only the runs of this status. */
  status?: AgentRunStatus;
  /** `desc` (default): newest first; `asc`: oldest first. */
  order?: "asc" | "desc";
}

/** The answer to cancelling an agent's runs. */
export interface AgentRunsCancelled {
  /** How many runs were pending and are now cancelled. */
  cancelled: number;
}

/** The answer to deleting a conversation. */
export interface ConversationDeleted {
  id: string;
  deleted: true;
  /** Messages deleted with it. */
  messagesDeleted: number;
}

/** A fact an agent keeps about one of its users, learnt after a turn or added by hand. */
export interface Memory {
  /** `mem_` followed by a ULID. */
  id: string;
  agentId: string;
  /** The user it is about. */
  userId: string;
  /** The fact, 1 to 1,000 characters. */
  text: string;
  /** The user's message it was learnt from; `null` when it was added by hand. */
  source: { messageId: string } | null;
  /** When it was stored. */
  createdAt: string;
}

/** Query of an agent's memories, newest first unless `order` says otherwise. */
export interface MemoryListParams extends CursorListParams {
  /** Only this user's memories. */
  userId?: string;
  /** Only the memories containing every word of this text (full-text search). */
  q?: string;
  order?: "asc" | "desc";
}

/** A memory to add by hand. */
export interface MemoryCreateParams {
  /** The user it is about, as messages name them. */
  userId: string;
  /** The fact, 1 to 1,000 characters once trimmed. */
  text: string;
}

/** The answer to deleting a memory. */
export interface MemoryDeleted {
  id: string;
  deleted: true;
}

/** A schedule's last fire and how its message went. */
export interface ScheduleFire {
  /** The fire time it stands for. */
  scheduledAt: string;
  /** When a process of the service ran it. */
  firedAt: string;
  /** The background message it sent (`msg_…`); `null` when none was sent. */
  messageId: string | null;
  /** The message's status, or `skipped` when no message was sent (the agent was inactive). */
  status: "pending" | "completed" | "failed" | "skipped";
  /** Why the message failed, or why none was sent. */
  error: { code: string; message: string } | null;
}

/** A schedule: the agent is sent `text` as a background message at each time of `cron` in `timezone`. */
export interface Schedule {
  /** `sch_` followed by a ULID. */
  id: string;
  agentId: string;
  /** 5 fields, or 6 with seconds first. */
  cron: string;
  /** An IANA time zone. */
  timezone: string;
  text: string;
  userId: string | null;
  roomId: string | null;
  enabled: boolean;
  /** The next fire time; `null` while disabled. */
  nextFireAt: string | null;
  /** The next 5 fire times, soonest first; empty while disabled. */
  nextFireTimes: string[];
  /** Fires not run because the service was down past them by more than an hour. */
  skippedFires: number;
  /** The last fire; `null` before the first. */
  lastFire: ScheduleFire | null;
  createdAt: string;
  updatedAt: string;
}

/** A schedule to create. */
export interface ScheduleCreateParams {
  /** A cron expression: 5 fields (`"0 9 * * 1-5"`) or 6 with seconds first. */
  cron: string;
  /** An IANA time zone (`"Europe/Berlin"`). */
  timezone: string;
  /** The message each fire sends. */
  text: string;
  userId?: string;
  roomId?: string;
  /** `true` when left out. */
  enabled?: boolean;
}

/** What to change in a schedule; `null` removes `userId` or `roomId`. */
export interface ScheduleUpdateParams {
  cron?: string;
  timezone?: string;
  text?: string;
  userId?: string | null;
  roomId?: string | null;
  enabled?: boolean;
}

/** Query of an agent's schedules, newest first unless `order` says otherwise. */
export interface ScheduleListParams extends CursorListParams {
  order?: "asc" | "desc";
}

/** The answer to deleting a schedule. */
export interface ScheduleDeleted {
  id: string;
  deleted: true;
}

/** The answer to erasing a user. */
export interface UserErased {
  userId: string;
  deleted: true;
  /** Messages this call deleted, in every agent of the account; `0` when none were left. */
  messagesDeleted: number;
}

/** What usage can be grouped by. */
export type UsageDimension = "agentId" | "userId" | "model" | "apiKeyId";

/** The width of usage buckets, in UTC. */
export type UsageGranularity = "hour" | "day";

/** Query of the account's usage. A range covers at most 31 days of hours or 400 days of days (400 otherwise). */
export interface UsageParams {
  /** The start of the range, inclusive, rounded down to the granularity. Default: `to` less 7 days. */
  from?: string | Date;
  /** The end of the range, exclusive, rounded up to the granularity; it may lie in the future. Default: now. */
  to?: string | Date;
  /** Default `day`. */
  granularity?: UsageGranularity;
  /** Only the messages to this agent. */
  agentId?: string;
  /** Only the messages of this user. */
  userId?: string;
  /** What each bucket's groups are; unset: one group per bucket. */
  groupBy?: UsageDimension[];
}

/** Query of one agent's usage: the account's query with the agent fixed. */
export type AgentUsageParams = Omit<UsageParams, "agentId">;

/** Percentiles of a duration in milliseconds, within 1 % of the exact value; `null` without a completed send. */
export interface UsagePercentiles {
  p50: number | null;
  p95: number | null;
}

/** The counts of a set of sends. */
export interface UsageFigures {
  /** Every send, failed ones included. */
  messages: number;
  /** Sends that ended in an error (cancelled ones are not errors). */
  errors: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** What the tokens cost, in US dollars, at the server's prices per model. */
  costUsd: number;
  /** From receipt to the complete reply, of completed sends. */
  latencyMs: UsagePercentiles;
  /** From receipt to the reply's first text, of completed sends. */
  timeToFirstTokenMs: UsagePercentiles;
}

/**
 * The figures of one group: the keys asked for in `groupBy` come with it, each `null` where the sends had none
 * (a `userId` of messages without one, or of an erased user).
 */
/** What a budget counts: `tokens`, or `usd` (what the tokens cost at the server's prices). */
export type BudgetUnit = "tokens" | "usd";
/** How often a budget starts again, in UTC. */
export type BudgetPeriod = "day" | "month";

/** A spend budget, with where it stands in its current period. */
export interface Budget {
  /** `bdg_` followed by a ULID. */
  id: string;
  /** Set: only this agent's messages count. */
  agentId: string | null;
  /** Set: only the messages sent with this key count. Neither: the whole account's. */
  apiKeyId: string | null;
  unit: BudgetUnit;
  period: BudgetPeriod;
  /** In the budget's unit: tokens, or US dollars. */
  limit: number;
  spend: {
    /** Spent this period, messages under way included. */
    spent: number;
    remaining: number;
    /** `spent` as a percentage of `limit`, to two decimals. */
    percent: number;
    periodStart: string;
    /** When the next period starts at zero. */
    resetsAt: string;
  };
  createdAt: string;
  updatedAt: string;
}

/** A new budget: the account's, or one agent's (`agentId`), or one key's (`apiKeyId`). */
export interface BudgetCreateParams {
  unit: BudgetUnit;
  /** A whole number of tokens, or US dollars (0.01 and up). */
  limit: number;
  period: BudgetPeriod;
  /** Only this agent's messages count. At most one of `agentId` and `apiKeyId`; neither: the whole account's. */
  agentId?: string;
  /** Only the messages sent with this key count. Not with `agentId`. */
  apiKeyId?: string;
}

/** What an update may change; what the budget counts and its unit stay. */
export interface BudgetUpdateParams {
  limit?: number;
  period?: BudgetPeriod;
}

export interface BudgetDeleted {
  id: string;
  deleted: true;
}

export interface UsageGroup extends UsageFigures {
  agentId?: string | null;
  userId?: string | null;
  model?: string | null;
  apiKeyId?: string | null;
}

/** One bucket of the range. */
export interface UsageBucket {
  /** Inclusive. */
  start: string;
  /** Exclusive. */
  end: string;
  /** Without `groupBy`, exactly one (zero-filled when nothing was sent); otherwise one per key seen. */
  groups: UsageGroup[];
}

/** The figures of the whole range; with `groupBy`, also each group's over the range. */
export interface UsageTotals extends UsageFigures {
  groups?: UsageGroup[];
}

/** Usage of a range: every bucket, zero-filled, oldest first, and the totals. */
export interface UsageReport {
  /** The start of the range, rounded down to the granularity. */
  from: string;
  /** The end of the range, exclusive, rounded up to the granularity. */
  to: string;
  granularity: UsageGranularity;
  /** The dimensions asked for; absent without grouping. */
  groupBy?: UsageDimension[];
  buckets: UsageBucket[];
  totals: UsageTotals;
}

/** A file or folder an elizaOS runtime reads knowledge from; kept, never fetched. */
export interface CharacterKnowledgeSource {
  path?: string;
  directory?: string | Record<string, unknown>;
  shared?: boolean;
  [field: string]: unknown;
}

/**
 * An elizaOS character file (v0.x, 1.x, or the grouped `messageExamples` of later releases). Only `name` is
 * required; fields not named here are accepted and kept for the export.
 */
export interface CharacterFile {
  name: string;
  /** 1.x: the agent's handle; kept for the export. */
  username?: string;
  /** A string is one item. */
  bio?: string | string[];
  system?: string;
  lore?: string[];
  topics?: string[];
  adjectives?: string[];
  style?: { all?: string[]; chat?: string[]; post?: string[]; [field: string]: unknown };
  /** Example conversations: arrays of `{name, content}` (v0.x: `user`), or `{examples: [...]}`. */
  messageExamples?: unknown[];
  postExamples?: string[];
  /** Facts, and file or folder references. */
  knowledge?: (string | CharacterKnowledgeSource)[];
  plugins?: (string | { name: string; enabled?: boolean; config?: Record<string, unknown> })[];
  clients?: AgentClient[];
  /** v0.x: an elizaOS provider name (`openai`, `anthropic`, `openrouter`, `llama_local`, …). */
  modelProvider?: string;
  /** `model`, `secrets` (stored write-only), and any other setting. */
  settings?: { model?: string; secrets?: Record<string, string | number | boolean>; [key: string]: unknown };
  /** 1.x: secret values by name, stored write-only. */
  secrets?: Record<string, string | number | boolean>;
  templates?: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * An agent as an elizaOS 1.x character file. What the format has no field for is under `settings.agentry`, so
 * that importing the file gives back an equal agent. Secrets are never exported: both are empty.
 */
export interface ExportedCharacterFile extends CharacterFile {
  bio: string[];
  /** Every plugin's name; their `enabled` and `config` are under `settings.agentry.plugins`. */
  plugins: string[];
  settings: { model?: string; secrets: Record<string, never>; agentry?: JsonObject; [key: string]: unknown };
  secrets: Record<string, never>;
  /** Not in an exported file: lore is folded into `bio`, and the rest is under `settings.agentry`. */
  lore?: never;
  clients?: never;
  modelProvider?: never;
}

/** The agent a character file would make: an agent's fields, without those the service sets on creation. */
export type AgentDraft = Omit<
  Agent,
  "id" | "status" | "statusReason" | "createdAt" | "updatedAt" | "apiEndpoint"
>;

/** An imported character file: the agent created, and what was kept but will not act, by path in the file. */
export interface CharacterImport {
  agent: Agent;
  warnings: FieldIssue[];
}

/** A dry run of an import: the agent the file would make (nothing is stored), and the warnings. */
export interface CharacterImportPreview {
  agent: AgentDraft;
  warnings: FieldIssue[];
}

/** Options of an import. */
export interface CharacterImportParams {
  /** Check the file and answer the agent it would make, storing nothing. Default `false`. */
  dryRun?: boolean;
  /**
   * Make the agent use the server's default provider and model (`modelProvider` and `model` `null`), keeping the
   * file's in `personality.sourceModelProvider` and `personality.sourceModel`. Default `false`.
   */
  useDefaultModel?: boolean;
}

/** What an endpoint can subscribe to: event types (`webhook.test` is sent whatever it lists), or `*` alone. */
export type WebhookSubscription = "*" | Exclude<WebhookEventType, "webhook.test">;

/** A webhook endpoint. Its secret is never part of it; only create and rotation show one. */
export interface WebhookEndpoint {
  /** `whk_` followed by a ULID. */
  id: string;
  /** Where deliveries are POSTed. */
  url: string;
  /** The event types delivered to it, or `["*"]` for every type. */
  events: WebhookSubscription[];
  /** Free text; empty when none was given. */
  description: string;
  /** Whether events are delivered to it. */
  enabled: boolean;
  /** Why the service disabled it (a `410 Gone`, or 5 days of failures); `null` otherwise. */
  disabledReason: string | null;
  createdAt: string;
  /** When it last changed (an update, a rotation, a disabling). */
  updatedAt: string;
}

/** An endpoint with its signing secret, shown once: on create and on rotation. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  /** `whsec_` followed by base64; verify deliveries with it (`webhooks.unwrap`). */
  secret: string;
}

/** The fields of a new webhook endpoint. */
export interface WebhookEndpointCreateParams {
  /**
   * An `https` URL whose host resolves only to public addresses (a deployment run with
   * `ALLOW_PRIVATE_NETWORKS=true` also takes `http` and private addresses).
   */
  url: string;
  /** Event types, each at most once, or `["*"]` alone for every type (those added later included). */
  events: WebhookSubscription[];
  /** Free text for you. */
  description?: string;
  /** Default `true`. */
  enabled?: boolean;
}

/** A partial update of an endpoint: only the fields given change. */
export interface WebhookEndpointUpdateParams {
  url?: string;
  events?: WebhookSubscription[];
  description?: string;
  /** `false` stops deliveries; `true` resumes them and clears `disabledReason`. */
  enabled?: boolean;
}

/** The answer to deleting an endpoint. */
export interface WebhookEndpointDeleted {
  id: string;
  deleted: true;
}

/** Where a delivery attempt stands. */
export type WebhookDeliveryStatus = "pending" | "succeeded" | "failed";

/** One attempt to deliver one event to an endpoint. What the endpoint answered is never shown beyond its status. */
export interface WebhookDelivery {
  /** `dlv_` followed by a ULID. */
  id: string;
  /** The event's id (`evt_…`), the `webhook-id` header of every attempt to deliver it. */
  eventId: string;
  eventType: WebhookEventType;
  /** 1 for the event's first attempt at this endpoint, then 2, 3, … across retries and redeliveries. */
  attempt: number;
  /** `pending` (waiting for its time, or being attempted), `succeeded` (a 2xx) or `failed` (see `error`). */
  status: WebhookDeliveryStatus;
  /** The HTTP status the endpoint answered; `null` when it gave none. */
  responseStatus: number | null;
  /** `null` while pending. */
  durationMs: number | null;
  /** Why the attempt failed; `null` unless failed. */
  error: string | null;
  /** When the attempt was scheduled. */
  createdAt: string;
  /** Pending: when it is due; failed: when its retry is due (`null` when none follows). */
  nextAttemptAt: string | null;
}

/** Query of an endpoint's delivery log. */
export interface WebhookDeliveryListParams extends CursorListParams {
  /** `desc` (default): newest first; `asc`: oldest first. */
  order?: "asc" | "desc";
}

/** A tool a plugin gives an agent. */
export interface PluginTool {
  /** The tool's name within its plugin; the model calls it as `<plugin>__<tool>`. */
  name: string;
  /** What the tool does, as the model reads it. */
  description: string;
  /** The JSON Schema of the tool's arguments. */
  inputSchema: Record<string, unknown>;
}

/** A plugin of the catalogue: what an agent may name in its `plugins`. */
export interface Plugin {
  /** The name an agent's `plugins` item uses. */
  name: string;
  version: string;
  description: string;
  /** The JSON Schema (draft 2020-12) of the `config` an agent gives the plugin. */
  configSchema: Record<string, unknown>;
  /** Names of the agent secrets the plugin reads (a config may name more, as the `mcp` plugin's `authSecret`). */
  secrets: string[];
  /** Its tools; empty for a plugin whose tools come from its config (`mcp`: those of its server). */
  tools: PluginTool[];
}

/** An agent's secret, as the API shows it: never its value. */
export interface Secret {
  /** 1 to 64 characters of `A-Z`, `a-z`, `0-9`, `_` and `-`. */
  name: string;
  /** When the value was last set. */
  updatedAt: string;
}

/** One platform client of an agent and how its connector stands. */
export interface ClientStatus {
  /** The platform, as named in `clients`. */
  type: string;
  /**
   * `connected`; `connecting` (starting, or another process holds the bot's lease); `stopped` (agent not active,
   * or a secret missing); `failed` (the platform rejected the token); `inert` (a platform not run).
   */
  state: "connected" | "connecting" | "stopped" | "failed" | "inert";
  connectedAt: string | null;
  lastEventAt: string | null;
  lastError: { code: string; message: string; at: string } | null;
}

/** The answer to a secret's delete. */
export interface SecretDeleted {
  name: string;
  deleted: true;
}

/** A file an agent answers from (docs/api/documents.md). */
export interface Document {
  /** `doc_` and a ULID. */
  id: string;
  agentId: string;
  title: string;
  contentType: "text/plain" | "text/markdown" | "text/html" | "application/pdf";
  sizeBytes: number;
  textLength: number;
  chunks: number;
  /** The knowledge reference of the agent's character it answers, or null. */
  source: string | null;
  createdAt: string;
}

/** A document sent as JSON: its text, or its bytes in base64 (at most 1 MiB of JSON). */
export interface DocumentCreateParams {
  title?: string;
  contentType?: Document["contentType"];
  /** The document's text. Exactly one of `text` and `contentBase64`. */
  text?: string;
  /** The file's bytes in base64 (a PDF, say). Exactly one of `text` and `contentBase64`. */
  contentBase64?: string;
  source?: string;
}

/** A file sent as `multipart/form-data` (at most 10 MiB). */
export interface DocumentUploadParams {
  /** The file's name; its extension tells the type when the Blob has none. */
  fileName?: string;
  title?: string;
  source?: string;
}

export interface DocumentListParams {
  limit?: number;
  before?: string;
  after?: string;
  order?: "asc" | "desc";
}

/** The answer to deleting a document. */
export interface DocumentDeleted {
  id: string;
  deleted: true;
}

/** The file and folder references of an imported character, and which no document answers yet. */
export interface KnowledgeSources {
  references: { path: string; kind: "file" | "folder"; uploaded: boolean }[];
  missing: string[];
}

/**
 * What a member may do: `owner` every scope; `admin` a developer's plus keys and members; `developer` reads plus
 * agents, messages, history, webhooks and plugins; `viewer` reads only.
 */
export type Role = "owner" | "admin" | "developer" | "viewer";

/** A person of the account, who signs in to the console with the scopes of their role. */
export interface Member {
  /** `usr_` followed by a ULID. */
  id: string;
  /** Lowercase; `null` only for the owner the admin CLI made with the account, until one is set. */
  email: string | null;
  name: string;
  role: Role;
  createdAt: string;
}

/** A member to invite. */
export interface MemberInviteParams {
  email: string;
  /** By default the part of the email before `@`. */
  name?: string;
  role: Role;
}

/** A change to a member: only the fields given change. */
export interface MemberUpdateParams {
  email?: string;
  name?: string;
  role?: Role;
}

/** Which members to list; newest first unless `order: "asc"`. */
export interface MemberListParams extends CursorListParams {
  order?: "asc" | "desc";
}

/** The answer to a removal. */
export interface MemberRemoved {
  id: string;
  removed: true;
}

/** One change to the account: who made it, what it changed, when and from where (docs/api/audit.md). */
export interface AuditEvent {
  /** `aud_` followed by a ULID; ids sort by time. */
  id: string;
  at: string;
  actor: { type: "member" | "key" | "cli"; id: string | null };
  /** `<resource>.<verb>`: `agent.update`, `key.revoke`, … */
  action: string;
  target: { type: string; id: string };
  ip: string | null;
  requestId: string | null;
  /** `{field: {from, to}}` of the fields changed; secrets read `"[redacted]"`. */
  changes: Record<string, { from: unknown; to: unknown }> | null;
}

/** Which audit events to export; every filter is optional. */
export interface AuditEventExportParams {
  actorType?: "member" | "key" | "cli";
  actorId?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  /** ISO-8601, inclusive. */
  since?: string;
  /** ISO-8601, exclusive. */
  until?: string;
}

/** Which audit events to list; newest first unless `order: "asc"`. */
export interface AuditEventListParams extends CursorListParams, AuditEventExportParams {
  order?: "asc" | "desc";
}
