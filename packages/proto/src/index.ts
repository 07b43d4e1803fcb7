export {
  auditEventMessage,
  auditQueryMessage,
  type PlainAuditEvent,
  type PlainAuditQuery,
  plainAuditEvent,
  plainAuditQuery,
} from "./audit.js";
export * from "./gen/agentry/connectors/v1/client_pb.js";
export * from "./gen/agentry/connectors/v1/connector_service_pb.js";
export * from "./gen/agentry/conversation/v1/conversation_pb.js";
export * from "./gen/agentry/conversation/v1/conversation_service_pb.js";
export * from "./gen/agentry/conversation/v1/document_pb.js";
export * from "./gen/agentry/conversation/v1/memory_pb.js";
export * from "./gen/agentry/conversation/v1/message_pb.js";
export * from "./gen/agentry/conversation/v1/provider_pb.js";
export * from "./gen/agentry/conversation/v1/schedule_pb.js";
export * from "./gen/agentry/conversation/v1/turn_pb.js";
export * from "./gen/agentry/conversation/v1/usage_pb.js";
export * from "./gen/agentry/registry/v1/account_pb.js";
export * from "./gen/agentry/registry/v1/account_service_pb.js";
export * from "./gen/agentry/registry/v1/agent_pb.js";
export * from "./gen/agentry/registry/v1/agent_service_pb.js";
export * from "./gen/agentry/registry/v1/audit_pb.js";
export * from "./gen/agentry/registry/v1/budget_pb.js";
export * from "./gen/agentry/registry/v1/budget_service_pb.js";
export * from "./gen/agentry/registry/v1/console_session_pb.js";
export * from "./gen/agentry/registry/v1/idempotency_service_pb.js";
export * from "./gen/agentry/registry/v1/plugin_service_pb.js";
export * from "./gen/agentry/webhooks/v1/webhook_pb.js";
export * from "./gen/agentry/webhooks/v1/webhook_service_pb.js";
