/**
 * The events webhooks deliver (decisions.md, "Webhooks"): what the other services publish, and `webhook.test`,
 * which is only ever sent to the one endpoint it was asked for.
 */
export const PUBLISHED_EVENT_TYPES = [
  "agent.created",
  "agent.updated",
  "agent.status_changed",
  "agent.deleted",
  "message.completed",
  "message.failed",
] as const;

export type PublishedEventType = (typeof PUBLISHED_EVENT_TYPES)[number];
export type EventType = PublishedEventType | "webhook.test";

/** What an endpoint subscribes to every published type with. */
export const ALL_EVENTS = "*";

export function isPublishedEventType(value: string): value is PublishedEventType {
  return (PUBLISHED_EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * Whether an endpoint's subscription takes events of this type. `webhook.test` matches nothing: a test event is
 * addressed to its endpoint directly, never fanned out.
 */
export function subscribes(events: readonly string[], type: string): boolean {
  if (!isPublishedEventType(type)) return false;
  return events.includes(ALL_EVENTS) || events.includes(type);
}
