import { isPublishedEventType } from "@agentry/events";

/*
 * The events webhooks deliver (docs/api/webhooks.md, "Events"): what the other services publish, and `webhook.test`,
 * which is only ever sent to the one endpoint it was asked for. The types are `@agentry/events`', which the
 * publishers write their events with.
 */
export {
  type EventType,
  isPublishedEventType,
  PUBLISHED_EVENT_TYPES,
  type PublishedEventType,
} from "@agentry/events";

/** What an endpoint subscribes to every published type with. */
export const ALL_EVENTS = "*";

/**
 * Whether an endpoint's subscription takes events of this type. `webhook.test` matches nothing: a test event is
 * addressed to its endpoint directly, never fanned out.
 */
export function subscribes(events: readonly string[], type: string): boolean {
  if (!isPublishedEventType(type)) return false;
  return events.includes(ALL_EVENTS) || events.includes(type);
}
