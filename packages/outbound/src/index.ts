export { OutboundClient, type OutboundClientOptions } from "./agent.js";
export { createGuardedFetch, type GuardedFetcher, type GuardedFetchOptions } from "./fetch.js";
export {
  checkUrl,
  guardedLookup,
  isPublicAddress,
  type OutboundPolicy,
  OutboundRefusedError,
  resolveDestination,
} from "./guard.js";
