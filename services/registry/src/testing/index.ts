/**
 * Test helpers: the contract suite every RegistryStore implementation runs, and agent fields to create with.
 * They import vitest, so only tests import them.
 */
export { agentFields, registryStoreContract } from "./store-contract.js";
