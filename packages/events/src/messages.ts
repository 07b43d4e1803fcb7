import type { JsonValue } from "./types.js";

/**
 * The `data` of `message.failed` (decisions.md, "Webhooks"): a background message whose reply failed, with the
 * error code and message the API would have answered.
 *
 * `message.completed` carries the reply object of decisions.md, "Messages" (the non-stream reply's `data`). Its
 * presentation lives in the gateway for now; the conversation service publishes message events through the same
 * outbox relay and `PublishEvents` call as the registry's agent events, and when it does, the reply's
 * presentation moves here beside the agent's, so the API and the events cannot drift apart.
 */
export interface MessageFailedData {
  [key: string]: JsonValue;
  agentId: string;
  messageId: string;
  code: string;
  message: string;
}
