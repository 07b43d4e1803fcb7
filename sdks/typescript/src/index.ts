export {
  Agentry,
  type ClientOptions,
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_RETRY_DELAY_MS,
  DEFAULT_TIMEOUT_MS,
} from "./client.js";
export type { Fetch, RequestOptions } from "./core.js";
export {
  AgentryError,
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  ApprovalRequiredError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  type FieldIssue,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from "./errors.js";
export { CursorPage, type CursorPagePromise, Page, PagePromise } from "./pagination.js";
export { Agents, type ConditionalRequestOptions } from "./resources/agents.js";
export { ApiKeys } from "./resources/api-keys.js";
export { AuditEvents } from "./resources/audit-events.js";
export { Budgets } from "./resources/budgets.js";
export { AgentClients } from "./resources/clients.js";
export { Conversations } from "./resources/conversations.js";
export { Documents } from "./resources/documents.js";
export { Members } from "./resources/members.js";
export { Memories } from "./resources/memories.js";
export { Messages } from "./resources/messages.js";
export { Plugins } from "./resources/plugins.js";
export { AgentRuns } from "./resources/runs.js";
export { Schedules } from "./resources/schedules.js";
export { AgentSecrets } from "./resources/secrets.js";
export { AccountUsage, AgentUsage } from "./resources/usage.js";
export { Users } from "./resources/users.js";
export { WebhookDeliveries, WebhookEndpoints } from "./resources/webhook-endpoints.js";
export { MessageStream } from "./streaming.js";
export type * from "./types.js";
export { UserExport, type UserExportLine } from "./user-export.js";
export { VERSION } from "./version.js";
export {
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  type WebhookHeaders,
  type WebhookPayload,
  type WebhookSignedHeaders,
  type WebhookSignOptions,
  Webhooks,
  type WebhookVerifyOptions,
  webhooks,
} from "./webhooks.js";
