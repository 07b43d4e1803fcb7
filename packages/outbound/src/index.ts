export { OutboundClient, type OutboundClientOptions } from "./agent.js";
export {
  checkUrl,
  guardedLookup,
  isPublicAddress,
  type OutboundPolicy,
  OutboundRefusedError,
  resolveDestination,
} from "./guard.js";
