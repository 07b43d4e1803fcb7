import { MESSAGE_BOUNDS, TIER_DEFAULTS, WEBHOOK_BOUNDS } from "@agentry/core";
import type { ErrorCode } from "@agentry/errors";
import type { z } from "zod";
import { NUL_FREE_PATTERN } from "../http/body.js";
import { PING_INTERVAL_MS } from "../http/sse.js";
import { listAgentsQuery } from "../validation/agents.js";
import { HISTORY_PAGE, listConversationsQuery, listMessagesQuery } from "../validation/history.js";
import { SECRET_NAME_PATTERN } from "../validation/plugins.js";
import { accountUsageQuery, agentUsageQuery, USAGE_DIMENSIONS } from "../validation/usage.js";
import { CHARACTER_OPERATION_DOCS } from "./characters.js";
import type { JsonSchema } from "./convert.js";
import { MEMORY_OPERATION_DOCS, MEMORY_PATH_PARAMETER } from "./memories.js";
import { STREAM_EVENT_SCHEMA_ID } from "./schemas.js";

export interface SuccessDoc {
  status: 200 | 201 | 202;
  /** The component schema of the JSON body. */
  schema: string;
  description: string;
  /** Headers beyond those every response has. */
  headers?: Record<string, JsonSchema>;
  /**
   * For an other success: the query values that ask for it instead of the main one (`x-when-query`), so that SDKs
   * can type the answer of each form of the request.
   */
  whenQuery?: Record<string, boolean | string>;
  /**
   * For an other success: the body values that ask for it (`x-when-body`). The generated SDKs give such an answer
   * a method of its own (`sdkMethod`), which sends those values itself.
   */
  whenBody?: Record<string, boolean | string>;
  /** For an answer asked for by body values: the SDK method that sends them itself (`x-sdk-method`). */
  sdkMethod?: string;
  /**
   * For a main answer that is one of several schemas (`oneOf`), told apart by their content rather than by the
   * request: the SDK method that reads each other schema (`x-sdk-variants`), and, for a state that lasts, the
   * method that waits while the answer still has the values of `pending`.
   */
  sdkVariants?: Record<
    string,
    { method: string; wait?: { method: string; pending: Record<string, string> } }
  >;
}

import { listDeliveriesQuery } from "../validation/webhooks.js";

/** What the document says about one REST operation beyond what the route table (`ROUTES`) says. */
export interface OperationDoc {
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** The component schema of the JSON request body. */
  requestBody?: string;
  success: SuccessDoc;
  /** Other successful answers, for another form of the request (a dry run). */
  otherSuccess?: SuccessDoc[];
  /** Query parameters beyond List Agents', one JSON Schema each. */
  queryParameters?: () => { name: string; schema: JsonSchema; required: boolean }[];
  /** Left out of the generated SDKs (`x-sdk-exclude`). */
  sdkExclude?: boolean;
  /**
   * Query parameters that take a comma-separated list of these values: documented as arrays sent as one
   * comma-separated value (`style: form`, `explode: false`), so that clients take a list.
   */
  commaSeparated?: Record<string, readonly string[]>;
  /**
   * The body is a JSON object of many shapes (a character file) that SDKs take whole, as one argument of this name
   * (`x-sdk-body-argument`), rather than field by field.
   */
  bodyArgument?: string;
  /** Answers the object itself, without the `{success, data}` envelope (`x-envelope: false`). */
  bare?: boolean;
  /** Error codes of this operation beyond the ones every authenticated operation has. */
  errors: ErrorCode[];
  /** The validation schema of the query parameters; each of its fields is one parameter. */
  query?: z.ZodType;
  /** How the list pages: by page number (`x-pagination`) or by cursor (`x-cursor-pagination`). */
  pagination?: "page" | "cursor";
  /** Answers `text/event-stream` when the body says `stream: true`. */
  stream?: boolean;
  /** Answers `text/event-stream` only, its events described by `MessageStreamEvent`. */
  eventsOnly?: boolean;
  /** Answers `application/x-ndjson`, one `success.schema` per line, instead of JSON. */
  ndjson?: boolean;
  /**
   * Where the generated SDKs put the operation when its path does not say (`x-sdk-resource`, `x-sdk-method`):
   * the webhook routes live under `webhookEndpoints`, since every SDK's `webhooks` verifies deliveries; the
   * character file routes are methods of `agents`.
   */
  sdk?: { resource: string[]; method: string };
}

export const PATH_PARAMETERS: Record<
  string,
  { description: string; example: string; bounds?: { minLength: number; maxLength: number; pattern: string } }
> = {
  agentId: {
    description:
      "The agent's id (`agt_…`). An id of another account's agent, or not of that form, is answered `404 AGENT_NOT_FOUND`.",
    example: "agt_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  memoryId: MEMORY_PATH_PARAMETER,
  conversationId: {
    description:
      "The conversation's id (`conv_…`). An id of another agent's or account's conversation, or not of that form, is answered `404 CONVERSATION_NOT_FOUND`.",
    example: "conv_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  messageId: {
    description:
      "The message's id (`msg_…`), as a list or the send call gave it. An id of another agent's or account's message, or not of that form, is answered `404 MESSAGE_NOT_FOUND`.",
    example: "msg_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  userId: {
    description: `The user id, as messages were sent with it, URL-encoded: 1 to ${MESSAGE_BOUNDS.idMaxLength} characters, no U+0000 (otherwise \`400 INVALID_REQUEST\`).`,
    example: "user-42",
    bounds: { minLength: 1, maxLength: MESSAGE_BOUNDS.idMaxLength, pattern: NUL_FREE_PATTERN },
  },
  webhookId: {
    description:
      "The webhook endpoint's id (`whk_…`). An id of another account's endpoint, or not of that form, is answered `404 WEBHOOK_NOT_FOUND`.",
    example: "whk_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  deliveryId: {
    description:
      "A delivery's id (`dlv_…`), as the endpoint's delivery log lists it. An id of another endpoint's delivery, or not of that form, is answered `404 DELIVERY_NOT_FOUND`.",
    example: "dlv_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
  name: {
    description:
      "The secret's name: 1 to 64 characters of `A-Z`, `a-z`, `0-9`, `_` and `-` (otherwise `400 INVALID_REQUEST`).",
    example: "MCP_TOKEN",
    bounds: { minLength: 1, maxLength: 64, pattern: SECRET_NAME_PATTERN },
  },
  keyId: {
    description:
      "The API key's id (`key_…`). Another account's key, or a revoked one, is answered `404 NOT_FOUND`.",
    example: "key_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
};

const CURSOR_NOTE = `Cursor-paged: \`limit\` 1 to ${HISTORY_PAGE.maxLimit} (default ${HISTORY_PAGE.defaultLimit}); \`before=<id>\` returns the items just older than that one, \`after=<id>\` those just newer, presented in the list's order either way; the next page's cursor is the last item's id (\`before\` it when newest first, \`after\` it when oldest first). A cursor that is not an item of this list (unknown, or another agent's) is answered \`400 INVALID_REQUEST\`, as are unknown or repeated parameters and values out of range.`;

const DISABLED_NOTE =
  "An endpoint that is disabled (`enabled: false`, by you or by the service) is sent nothing: the request is refused with `400 INVALID_REQUEST` naming `enabled`.";

/** The authenticated operations, keyed by `METHOD path` as in `ROUTES`. */
export const OPERATION_DOCS: Record<string, OperationDoc> = {
  "POST /v1/agents": {
    operationId: "createAgent",
    tag: "Agents",
    summary: "Create an agent",
    description: `Creates an agent in the caller's account. It starts \`active\`. \`name\` is required; omitted arrays are stored as \`[]\`, objects as \`{}\`, \`modelProvider\` and \`model\` as \`null\` (the server's defaults, resolved when a message is sent). Unknown fields, and \`id\`, \`status\`, \`statusReason\`, \`createdAt\`, \`updatedAt\`, \`apiEndpoint\`, are refused. An account holds at most its plan's \`maxAgents\` agents (${TIER_DEFAULTS.standard.maxAgents} by default).\n\n\`modelProvider\` may name any provider this server has a client for (\`openai\`, \`anthropic\`, \`local\`), configured here or not; one with no configuration is written all the same, and \`warnings\` names the variable to set (\`OPENAI_API_KEY\`, \`ANTHROPIC_API_KEY\`); until then its messages fail with \`502 MODEL_ERROR\`.`,
    requestBody: "CreateAgentRequest",
    success: {
      status: 201,
      schema: "AgentWriteResponse",
      description: "The agent created, and the warnings.",
    },
    errors: ["INVALID_REQUEST", "INSUFFICIENT_QUOTA", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "GET /v1/agents": {
    operationId: "listAgents",
    tag: "Agents",
    summary: "List agents",
    description:
      "Lists the caller's agents a page at a time, newest first unless `sortBy` and `order` say otherwise. Out-of-range or unknown query parameters are refused, never clamped; a parameter given twice is refused.",
    query: listAgentsQuery,
    pagination: "page",
    success: { status: 200, schema: "AgentListResponse", description: "One page of agents." },
    errors: ["INVALID_REQUEST"],
  },
  "GET /v1/agents/:agentId": {
    operationId: "getAgent",
    tag: "Agents",
    summary: "Get an agent",
    description: "Returns the full agent record.",
    success: { status: 200, schema: "AgentResponse", description: "The agent." },
    errors: ["AGENT_NOT_FOUND"],
  },
  "PATCH /v1/agents/:agentId": {
    operationId: "updateAgent",
    tag: "Agents",
    summary: "Update an agent",
    description:
      "Changes only the fields supplied; the others stay as they are. `status` may be set to `active` or `inactive` (`inactive` keeps all data but refuses messages). `null` resets `modelProvider` or `model` to the server's default. A PATCH that supplies `modelProvider`, `model` or `settings` takes an agent out of `error` (back to `active`), as does one that sets `status`.",
    requestBody: "UpdateAgentRequest",
    success: {
      status: 200,
      schema: "AgentWriteResponse",
      description: "The agent as updated, and the warnings.",
    },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "DELETE /v1/agents/:agentId": {
    operationId: "deleteAgent",
    tag: "Agents",
    summary: "Delete an agent",
    description:
      "Deletes the agent permanently: its configuration, conversation history, usage metrics and logs are removed and its platform integrations disconnected. Irreversible; nothing of it can be read afterwards. Deleting several agents takes one request each.",
    success: { status: 200, schema: "AgentDeletedResponse", description: "The agent was deleted." },
    errors: ["AGENT_NOT_FOUND"],
  },
  "POST /v1/agents/:agentId/messages": {
    operationId: "sendMessage",
    tag: "Messages",
    summary: "Send a message to an agent",
    description: `Sends a text message and returns the agent's reply. Context is kept per agent, \`userId\` and \`roomId\`: send the same \`userId\` for the same user; calls without them share one default conversation. \`context\` applies to this message only. The model may call the tools of the agent's enabled plugins, up to \`settings.maxToolSteps\` rounds; the reply's \`toolCalls\` lists the calls with their outcomes, and its \`usage\` counts every model call of the turn. An agent in \`error\` is still called (a success takes it out of \`error\`); an \`inactive\` one refuses messages.\n\nWith \`stream: true\` the reply arrives as server-sent events (\`text/event-stream\`): \`message.started\`, any number of \`message.delta\` (and, when the model calls tools of the agent's plugins, \`tool.call\` and \`tool.result\` between them), then exactly one of \`message.completed\` or \`error\`, after which the stream closes. Each event has an \`id:\` (its sequence number, from 1), an \`event:\` name and JSON \`data:\`; the \`text/event-stream\` schema, \`MessageStreamEvent\`, describes each event and the JSON of its data. A \`: ping\` comment line is sent after every ${PING_INTERVAL_MS / 1000} seconds of silence. Anything that fails before the stream starts (validation, 404, 409, 429, a provider that is down) is an ordinary JSON error response. Only a complete reply is stored.\n\nEvery stream can be resumed for \`STREAM_RETENTION\` (1 hour by default) after it ends, at \`GET /v1/agents/{agentId}/messages/{messageId}/events\` with \`Last-Event-ID\`. With \`onDisconnect: "continue"\` the reply is generated to its end and stored even when the caller goes away (it still holds a concurrency slot until then); the default, \`cancel\`, stops it.\n\nWith \`background: true\` the answer is \`202\` with the reply's id and \`status: "pending"\` at once; the reply is generated whatever happens to the caller, and \`GET /v1/agents/{agentId}/messages/{messageId}\` tells whether it is \`pending\`, \`completed\` (with the reply) or \`failed\` (with the error). It holds a concurrency slot until it ends.`,
    requestBody: "SendMessageRequest",
    success: {
      status: 200,
      schema: "MessageResponse",
      description:
        "The agent's reply; with `stream: true`, a stream of server-sent events, each one a `MessageStreamEvent`.",
    },
    otherSuccess: [
      {
        status: 202,
        schema: "BackgroundMessageAcceptedResponse",
        description: "With `background: true`: the message is accepted, and its reply is being generated.",
        whenBody: { background: true },
        sdkMethod: "sendBackground",
      },
    ],
    errors: [
      "INVALID_REQUEST",
      "AGENT_NOT_FOUND",
      "AGENT_INACTIVE",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
      "MODEL_ERROR",
    ],
    stream: true,
  },
  "GET /v1/agents/:agentId/conversations": {
    operationId: "listConversations",
    tag: "History",
    summary: "List an agent's conversations",
    description: `The agent's conversations, newest activity first, optionally only those of one \`userId\` or one \`roomId\` (both: the one conversation). ${CURSOR_NOTE}`,
    query: listConversationsQuery,
    pagination: "cursor",
    success: { status: 200, schema: "ConversationListResponse", description: "One page of conversations." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
  },
  "DELETE /v1/agents/:agentId/conversations/:conversationId": {
    operationId: "deleteConversation",
    tag: "History",
    summary: "Delete a conversation",
    description:
      "Deletes the conversation and all its messages, in one transaction: they are gone from every read and from every later prompt (the next message with the same `userId` and `roomId` starts a new conversation, with a new id). Deleting it again is answered `404 CONVERSATION_NOT_FOUND`.",
    success: {
      status: 200,
      schema: "ConversationDeletedResponse",
      description: "The conversation was deleted, with this many messages.",
    },
    errors: ["AGENT_NOT_FOUND", "CONVERSATION_NOT_FOUND"],
  },
  "GET /v1/agents/:agentId/messages": {
    operationId: "listMessages",
    tag: "History",
    summary: "List an agent's messages",
    description: `The agent's stored messages, both sides (a message before its reply), newest first unless \`order=asc\`. Filters: \`conversationId\` (one conversation), or \`userId\` (that user's messages in every room), \`roomId\` (every user's in that room), both (one conversation); none: every message of the agent. \`conversationId\` with \`userId\` or \`roomId\` is refused with \`400 INVALID_REQUEST\`. ${CURSOR_NOTE}`,
    query: listMessagesQuery,
    pagination: "cursor",
    success: { status: 200, schema: "HistoryMessageListResponse", description: "One page of messages." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "CONVERSATION_NOT_FOUND"],
  },
  "GET /v1/agents/:agentId/messages/:messageId": {
    operationId: "getMessage",
    tag: "History",
    summary: "Get a message",
    description:
      "One stored message of the agent: a message sent to it, or its reply (whose id the send call answered with). For a message sent with `background: true`, a `BackgroundMessage`: the reply object with `status` (`pending`, `completed` or `failed`). A completed one is answered so for as long as its reply is stored; a failed one for 24 hours after it ended (or `STREAM_RETENTION`, if longer), then `404 MESSAGE_NOT_FOUND`.",
    success: {
      status: 200,
      schema: "MessageByIdResponse",
      description:
        "The message (`HistoryMessage`); for a background message while its events are kept, a `BackgroundMessage`.",
      sdkVariants: {
        BackgroundMessage: {
          method: "getBackground",
          wait: { method: "waitForBackground", pending: { status: "pending" } },
        },
      },
    },
    errors: ["AGENT_NOT_FOUND", "MESSAGE_NOT_FOUND"],
  },
  "GET /v1/agents/:agentId/messages/:messageId/events": {
    operationId: "resumeMessageEvents",
    tag: "Messages",
    summary: "Resume a message's stream",
    description:
      "The server-sent events of a streamed or background message after the one named by `Last-Event-ID` (the `id:` of the last event received) or, without that header, by `after`; from the first event when neither is given. Events are replayed exactly as first sent (same `id:`, `event:` and data), then live ones follow while the reply is generated, whichever gateway serves the request; the stream ends with its terminal event (`message.completed` or `error`). A message whose reply ended more than `STREAM_RETENTION` (1 hour by default) ago, or that is unknown, is `404 STREAM_NOT_FOUND`. The SDKs resume a dropped stream this way by themselves.",
    queryParameters: () => [
      {
        name: "after",
        required: false,
        schema: {
          type: "string",
          pattern: "^\\d{1,15}$",
          description:
            "The id of the last event received (as `Last-Event-ID`, which takes precedence): the events after it are sent. `0` or unset: all of them.",
          examples: ["3"],
        },
      },
    ],
    success: {
      status: 200,
      schema: STREAM_EVENT_SCHEMA_ID,
      description: "The events after the one named, then the live ones, each one a `MessageStreamEvent`.",
    },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "STREAM_NOT_FOUND"],
    eventsOnly: true,
    sdkExclude: true,
  },
  "GET /v1/users/:userId/export": {
    sdk: { resource: ["users"], method: "export" },
    operationId: "exportUser",
    tag: "History",
    summary: "Export a user's messages",
    description:
      "Every message the user exchanged with any agent of the account, oldest first, as NDJSON (`application/x-ndjson`): one `HistoryMessage` per line, each with its `agentId`, each line ending in `\\n`. The response is streamed as it is read, a page at a time, so its size is not limited; a user with no messages is answered `200` with an empty body. Messages of an agent that no longer exists are left out. After the messages come the user's memories (docs/api/memories.md), one `Memory` per line, told apart by their `mem_` ids. A failure after the first line cuts the response short (it ends without its last chunk), which HTTP clients report as an incomplete body: retry the export.",
    success: {
      status: 200,
      schema: "HistoryMessage",
      description:
        "The user's messages, then their memories, one JSON object per line; an empty body when there are none.",
    },
    errors: ["INVALID_REQUEST"],
    ndjson: true,
  },
  "DELETE /v1/users/:userId": {
    operationId: "eraseUser",
    tag: "History",
    summary: "Erase a user",
    description:
      "Erases the user's conversations and messages in every agent of the account, in one transaction, and removes the user id from the usage records, whose counts stay, unattributed; then the user's `message.completed` webhook events and their delivery log. Nothing of them can be read afterwards, nor reaches a later prompt. Idempotent: erasing again, or a user with no messages, answers the same with `messagesDeleted: 0`.",
    success: { status: 200, schema: "UserErasedResponse", description: "The user was erased." },
    errors: ["INVALID_REQUEST"],
  },
  "GET /v1/usage": {
    operationId: "getUsage",
    tag: "Usage",
    summary: "Get the account's usage",
    description:
      "The account's sends, tokens, errors, latency and time to first token, by hour or by day (UTC), from rollups recorded with each send. Every bucket of the range is present, zero-filled. `groupBy` splits each bucket (and the totals) by agent, user, model or API key; `agentId` and `userId` filter. A range longer than 31 days of hours or 400 days of days, or one that ends before it starts, is refused with `400 INVALID_REQUEST`. A deleted agent's usage goes with it; an erased user's stays, with no user id.",
    query: accountUsageQuery,
    commaSeparated: { groupBy: USAGE_DIMENSIONS },
    success: { status: 200, schema: "UsageResponse", description: "The usage of the range." },
    errors: ["INVALID_REQUEST"],
  },
  "GET /v1/agents/:agentId/usage": {
    operationId: "getAgentUsage",
    tag: "Usage",
    summary: "Get an agent's usage",
    description:
      "The usage of one agent, as `GET /v1/usage` answers it with `agentId` fixed (so grouping by `agentId` gives one group).",
    query: agentUsageQuery,
    commaSeparated: { groupBy: USAGE_DIMENSIONS },
    success: { status: 200, schema: "UsageResponse", description: "The agent's usage of the range." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
  },
  "POST /v1/webhooks": {
    sdk: { resource: ["webhookEndpoints"], method: "create" },
    operationId: "createWebhook",
    tag: "Webhooks",
    summary: "Create a webhook endpoint",
    description: `Registers a URL to receive the account's events, signed per Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\` headers; an HMAC-SHA256 with the endpoint's secret). The answer carries the secret (\`whsec_…\`), the only time it is shown: store it to verify deliveries. The URL is checked and its host resolved before anything is stored (see \`url\`). An account holds at most ${WEBHOOK_BOUNDS.maxPerAccount} endpoints; one more is \`403 INSUFFICIENT_QUOTA\`.`,
    requestBody: "CreateWebhookRequest",
    success: { status: 201, schema: "WebhookCreatedResponse", description: "The endpoint, with its secret." },
    errors: ["INVALID_REQUEST", "INSUFFICIENT_QUOTA", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "GET /v1/webhooks": {
    sdk: { resource: ["webhookEndpoints"], method: "list" },
    operationId: "listWebhooks",
    tag: "Webhooks",
    summary: "List webhook endpoints",
    description: `Every endpoint of the account (at most ${WEBHOOK_BOUNDS.maxPerAccount}), newest first, without their secrets.`,
    success: { status: 200, schema: "WebhookListResponse", description: "The account's endpoints." },
    errors: [],
  },
  "GET /v1/webhooks/:webhookId": {
    sdk: { resource: ["webhookEndpoints"], method: "get" },
    operationId: "getWebhook",
    tag: "Webhooks",
    summary: "Get a webhook endpoint",
    description: "One endpoint, without its secret.",
    success: { status: 200, schema: "WebhookResponse", description: "The endpoint." },
    errors: ["WEBHOOK_NOT_FOUND"],
  },
  "PATCH /v1/webhooks/:webhookId": {
    sdk: { resource: ["webhookEndpoints"], method: "update" },
    operationId: "updateWebhook",
    tag: "Webhooks",
    summary: "Update a webhook endpoint",
    description:
      "Changes only the fields supplied. A new `url` is checked as on create. `enabled: false` stops deliveries (pending attempts fail, nothing stale arrives later); `enabled: true` resumes them and clears `disabledReason`.",
    requestBody: "UpdateWebhookRequest",
    success: { status: 200, schema: "WebhookResponse", description: "The endpoint as updated." },
    errors: ["INVALID_REQUEST", "WEBHOOK_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "DELETE /v1/webhooks/:webhookId": {
    sdk: { resource: ["webhookEndpoints"], method: "delete" },
    operationId: "deleteWebhook",
    tag: "Webhooks",
    summary: "Delete a webhook endpoint",
    description: "Deletes the endpoint and its delivery log; nothing more is sent to it.",
    success: { status: 200, schema: "WebhookDeletedResponse", description: "The endpoint was deleted." },
    errors: ["WEBHOOK_NOT_FOUND"],
  },
  "POST /v1/webhooks/:webhookId/rotate-secret": {
    sdk: { resource: ["webhookEndpoints"], method: "rotateSecret" },
    operationId: "rotateWebhookSecret",
    tag: "Webhooks",
    summary: "Rotate a webhook endpoint's secret",
    description:
      "Gives the endpoint a new secret, shown this once. For 24 hours deliveries carry a signature by the previous secret as well (the `webhook-signature` header then holds two), so a receiver can switch without losing any; a second rotation within those hours retires the first secret at once. Not retried by the SDKs: each call makes a new secret.",
    success: {
      status: 200,
      schema: "WebhookCreatedResponse",
      description: "The endpoint, with its new secret.",
    },
    errors: ["WEBHOOK_NOT_FOUND"],
  },
  "POST /v1/webhooks/:webhookId/test": {
    sdk: { resource: ["webhookEndpoints"], method: "sendTestEvent" },
    operationId: "sendWebhookTest",
    tag: "Webhooks",
    summary: "Send a test event",
    description: `Sends a \`webhook.test\` event (\`data\`: \`{webhookId, message}\`) to this endpoint alone, whatever events it subscribes to, signed and retried like any other. ${DISABLED_NOTE}`,
    success: {
      status: 200,
      schema: "DeliveryResponse",
      description: "The test event's first delivery attempt, pending; the delivery log shows how it went.",
    },
    errors: ["INVALID_REQUEST", "WEBHOOK_NOT_FOUND"],
  },
  "GET /v1/webhooks/:webhookId/deliveries": {
    sdk: { resource: ["webhookEndpoints", "deliveries"], method: "list" },
    operationId: "listWebhookDeliveries",
    tag: "Webhooks",
    summary: "List an endpoint's deliveries",
    description: `The endpoint's delivery log, one entry per attempt (a retry or a redelivery is an entry of its own, with the same \`eventId\`), newest first unless \`order=asc\`. What the endpoint answered is never shown beyond its status. ${CURSOR_NOTE.replace("or another agent's", "or another endpoint's")}`,
    query: listDeliveriesQuery,
    pagination: "cursor",
    success: { status: 200, schema: "DeliveryListResponse", description: "One page of the delivery log." },
    errors: ["INVALID_REQUEST", "WEBHOOK_NOT_FOUND"],
  },
  "POST /v1/webhooks/:webhookId/deliveries/:deliveryId/redeliver": {
    sdk: { resource: ["webhookEndpoints", "deliveries"], method: "redeliver" },
    operationId: "redeliverWebhookDelivery",
    tag: "Webhooks",
    summary: "Redeliver an event",
    description: `Schedules a new attempt, due now, of the event of one of the endpoint's deliveries: a new delivery id, the same event and \`webhook-id\`, so a receiver that has it already can tell. It is attempted once; a failure is not retried. ${DISABLED_NOTE}`,
    success: { status: 200, schema: "DeliveryResponse", description: "The new attempt, pending." },
    errors: ["INVALID_REQUEST", "WEBHOOK_NOT_FOUND", "DELIVERY_NOT_FOUND"],
  },
  "POST /v1/api-keys": {
    operationId: "createApiKey",
    tag: "API keys",
    summary: "Create an API key",
    description:
      "Creates a key in the caller's account and returns its secret, the only time it is shown. A key can grant only scopes the calling key holds. Without `scopes`, a full-access calling key makes a full-access key (`fullAccess: true`: every scope, including scopes added in later versions) and any other key makes one with exactly its own scopes.",
    requestBody: "CreateApiKeyRequest",
    success: { status: 201, schema: "ApiKeyResponse", description: "The key created, with its secret." },
    errors: ["INVALID_REQUEST", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "GET /v1/api-keys": {
    operationId: "listApiKeys",
    tag: "API keys",
    summary: "List API keys",
    description: "Lists the account's keys that are not revoked, without their secrets.",
    success: { status: 200, schema: "ApiKeyListResponse", description: "The account's keys." },
    errors: [],
  },
  "DELETE /v1/api-keys/:keyId": {
    operationId: "revokeApiKey",
    tag: "API keys",
    summary: "Revoke an API key",
    description:
      "Revokes a key of the caller's account. The key stops working at once on the gateway that answers, and on the others within their key cache time (`AUTH_CACHE_TTL_MS`, under a second by default). A key may revoke itself.",
    success: { status: 200, schema: "ApiKeyRevokedResponse", description: "The key was revoked." },
    errors: ["NOT_FOUND"],
  },
  "GET /v1/plugins": {
    sdk: { resource: ["plugins"], method: "list" },
    operationId: "listPlugins",
    tag: "Plugins",
    summary: "List the plugin catalogue",
    description:
      "The plugins this deployment installs, sorted by name: each with its version, the JSON Schema of the `config` an agent gives it, the names of the secrets it reads and its tools. An agent uses a plugin by naming it in `plugins`; during a turn the model may call the tools of the agent's enabled plugins.",
    success: { status: 200, schema: "PluginListResponse", description: "The catalogue." },
    errors: [],
  },
  "PUT /v1/agents/:agentId/secrets/:name": {
    sdk: { resource: ["agents", "secrets"], method: "set" },
    operationId: "putAgentSecret",
    tag: "Plugins",
    summary: "Set an agent's secret",
    description:
      "Sets one secret of the agent, replacing its value if it exists: a credential its plugins read (the `mcp` plugin's `authSecret`, for example). The value is stored encrypted (AES-256-GCM under the deployment's `SECRETS_KEY`) and is never returned, logged or exported; the answer names the secret and when it was set. Deleting the agent deletes its secrets.",
    requestBody: "PutSecretRequest",
    success: { status: 200, schema: "SecretResponse", description: "The secret's name and when it was set." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
  },
  "GET /v1/agents/:agentId/secrets": {
    sdk: { resource: ["agents", "secrets"], method: "list" },
    operationId: "listAgentSecrets",
    tag: "Plugins",
    summary: "List an agent's secrets",
    description:
      "The names of the agent's secrets and when each was set, sorted by name; never their values.",
    success: { status: 200, schema: "SecretListResponse", description: "The agent's secrets." },
    errors: ["AGENT_NOT_FOUND"],
  },
  "DELETE /v1/agents/:agentId/secrets/:name": {
    sdk: { resource: ["agents", "secrets"], method: "delete" },
    operationId: "deleteAgentSecret",
    tag: "Plugins",
    summary: "Delete an agent's secret",
    description: "Deletes one secret of the agent; a plugin that reads it then runs without it.",
    success: { status: 200, schema: "SecretDeletedResponse", description: "The secret was deleted." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "SECRET_NOT_FOUND"],
  },
  "GET /v1/agents/:agentId/clients": {
    sdk: { resource: ["agents", "clients"], method: "list" },
    operationId: "listAgentClients",
    tag: "Agents",
    summary: "List an agent's platform clients",
    description:
      "Each platform the agent's `clients` names, in order, and how its connector stands: `connected` (polling or holding the platform session), `connecting` (starting, or waiting for another process's lease on the bot token), `stopped` (the agent is not active or lacks the platform's secrets, e.g. `TELEGRAM_BOT_TOKEN`), `failed` (the platform rejected the token: the agent is `error` with `CLIENT_AUTH_FAILED` until a PATCH or a new secret) or `inert` (a platform the service does not run).",
    success: { status: 200, schema: "ClientStatusListResponse", description: "The agent's clients." },
    errors: ["AGENT_NOT_FOUND"],
  },
  ...CHARACTER_OPERATION_DOCS,
  ...MEMORY_OPERATION_DOCS,
};

/** The error codes every authenticated operation can answer. */
export const AUTHENTICATED_ERRORS: ErrorCode[] = [
  "UNAUTHORIZED",
  "FORBIDDEN",
  "RATE_LIMIT_EXCEEDED",
  "INTERNAL_ERROR",
  "AGENT_UNAVAILABLE",
];
