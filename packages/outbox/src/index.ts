export {
  eachEvent,
  type OutboxConsumer,
  OutboxRelay,
  type OutboxRelayOptions,
  type OutboxSource,
  wholeBatches,
} from "./relay.js";
export { PUBLISH_BYTES, type PublishEvents, publishingConsumer, publishWith } from "./webhooks.js";
