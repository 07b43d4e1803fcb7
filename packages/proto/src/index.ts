export * from "./gen/agentry/conversation/v1/conversation_service_pb.js";
export * from "./gen/agentry/conversation/v1/message_pb.js";
export * from "./gen/agentry/conversation/v1/turn_pb.js";
export * from "./gen/agentry/conversation/v1/usage_pb.js";
export * from "./gen/agentry/registry/v1/account_pb.js";
export * from "./gen/agentry/registry/v1/account_service_pb.js";
export * from "./gen/agentry/registry/v1/agent_pb.js";
export * from "./gen/agentry/registry/v1/agent_service_pb.js";
