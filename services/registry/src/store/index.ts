/** The registry's store alone, for tools (the admin CLI) that work on the data without the RPC layer. */
export { openRegistryStore, type RegistryStoreOptions } from "./open.js";
export { applyAgentPatch } from "./patch.js";
export type * from "./types.js";
