/**
 * Test helpers: the contract suite every WebhookStore implementation runs. It imports vitest, so only tests
 * import it.
 */
export { type ManualClock, manualClock, webhookStoreContract } from "./store-contract.js";
