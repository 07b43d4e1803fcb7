export { webhookEvent, webhooksConsumer } from "./outbox/webhooks.js";
export { type BuildRegistryOptions, buildRegistry, type Registry } from "./registry.js";
export { specFromProto } from "./rpc/agent-json.js";
export type { RegistryContext } from "./rpc/context.js";
export {
  accountToProto,
  agentToProto,
  apiKeyToProto,
  fromTimestamp,
  limitsFromProto,
  limitsToProto,
  specToProto,
  statusFromProto,
  statusReasonFromProto,
  statusReasonToProto,
  statusToProto,
  tierFromProto,
  tierToProto,
  toTimestamp,
} from "./rpc/convert.js";
export { registryRoutes } from "./rpc/routes.js";
export { SecretVault } from "./secrets.js";
export { openRegistryStore, type RegistryStoreOptions } from "./store/open.js";
export { applyAgentPatch } from "./store/patch.js";
export type * from "./store/types.js";
