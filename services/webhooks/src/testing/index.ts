/**
 * Test helpers: the contract suite every WebhookStore implementation runs, and a receiver standing in for users'
 * endpoints that verifies deliveries with the `standardwebhooks` package. They import vitest and dev
 * dependencies, so only tests import them.
 */
export { type Answer, type Received, Receiver, verify } from "./receiver.js";
export { type ManualClock, manualClock, webhookStoreContract } from "./store-contract.js";
