export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * The event types services publish for webhooks (docs/api/webhooks.md, "Events"). The registry publishes the agent
 * events, the conversation service the message events, the gateways the budget events, all through PublishEvents.
 */
export const PUBLISHED_EVENT_TYPES = [
  "agent.created",
  "agent.updated",
  "agent.status_changed",
  "agent.deleted",
  "message.completed",
  "message.failed",
  "message.requires_action",
  "budget.threshold",
] as const;

export type PublishedEventType = (typeof PUBLISHED_EVENT_TYPES)[number];

/** Made by the webhooks service itself for one endpoint, on request; never published. */
export const TEST_EVENT_TYPE = "webhook.test";

export type EventType = PublishedEventType | typeof TEST_EVENT_TYPE;

export function isPublishedEventType(value: string): value is PublishedEventType {
  return (PUBLISHED_EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * An event as a publisher hands it over (the webhooks service's `PublishEvents`); receivers get
 * `{id, type, createdAt, data}` of it.
 */
export interface PublicEvent<D extends JsonObject = JsonObject> {
  /**
   * `evt_` and a ULID, fixed when the event is written to the publisher's outbox: a relay that sends it again
   * sends the same id, which is how the webhooks service knows it has it already.
   */
  id: string;
  type: PublishedEventType;
  /** The account whose endpoints receive it. */
  accountId: string;
  /** When it happened: ISO 8601 with milliseconds, UTC. */
  createdAt: string;
  data: D;
}
