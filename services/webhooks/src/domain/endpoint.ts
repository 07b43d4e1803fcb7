import { charCount, WEBHOOK_BOUNDS } from "@agentry/core";
import { AppError, type FieldIssue, invalid, invalidRequest } from "@agentry/errors";
import { checkUrl, type OutboundPolicy, OutboundRefusedError, resolveDestination } from "@agentry/outbound";
import { ALL_EVENTS, isPublishedEventType, PUBLISHED_EVENT_TYPES } from "./events.js";

/** Bounds of an endpoint's fields (docs/api/webhooks.md, "Endpoints"), shared with the gateway that states them. */
export const ENDPOINT_BOUNDS = WEBHOOK_BOUNDS;

/** The fields of an endpoint that callers write, as checked. */
export interface EndpointFields {
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
}

type Lookup = Parameters<typeof resolveDestination>[2];

export interface UrlCheck {
  policy: OutboundPolicy;
  /** Name resolution instead of the system's, for tests. */
  lookup?: Lookup;
}

/**
 * The events list as stored: known types without repeats, in the order given, or `["*"]`. Issues name the
 * item at fault (`events[2]`).
 */
export function eventsIssues(events: readonly string[]): FieldIssue[] {
  if (events.length === 0) {
    return [{ field: "events", issue: `must list at least one event type, or "${ALL_EVENTS}" for all` }];
  }
  if (events.includes(ALL_EVENTS) && events.length > 1) {
    return [{ field: "events", issue: `must be ["${ALL_EVENTS}"] alone or a list of event types` }];
  }
  const issues: FieldIssue[] = [];
  events.forEach((type, index) => {
    if (type !== ALL_EVENTS && !isPublishedEventType(type)) {
      issues.push({
        field: `events[${index}]`,
        issue: `is not an event type; known types: ${PUBLISHED_EVENT_TYPES.join(", ")}, or "${ALL_EVENTS}"`,
      });
    } else if (events.indexOf(type) !== index) {
      issues.push({ field: `events[${index}]`, issue: `repeats ${type}` });
    }
  });
  return issues;
}

export function descriptionIssues(description: string): FieldIssue[] {
  return charCount(description) > ENDPOINT_BOUNDS.descriptionMaxLength
    ? [{ field: "description", issue: `must be at most ${ENDPOINT_BOUNDS.descriptionMaxLength} characters` }]
    : [];
}

/**
 * Checks a URL an endpoint is given as deliveries will use it: https, no credentials, and a host that resolves,
 * every address public (unless private networks are allowed). Deliveries check again as each connection is
 * made, since what a name resolves to can change at any time; this check tells the caller at once.
 */
export async function checkEndpointUrl(url: string, check: UrlCheck): Promise<string> {
  if (url.length > ENDPOINT_BOUNDS.urlMaxLength) {
    throw invalid("url", `must be at most ${ENDPOINT_BOUNDS.urlMaxLength} characters`);
  }
  try {
    const parsed = checkUrl(url, check.policy);
    await resolveDestination(parsed, check.policy, check.lookup);
    return url;
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw invalid("url", error.reason);
    throw error;
  }
}

/** Checks every field of a new endpoint, reporting every problem at once; the URL is resolved last. */
export async function checkNewEndpoint(fields: EndpointFields, check: UrlCheck): Promise<EndpointFields> {
  const issues = [...eventsIssues(fields.events), ...descriptionIssues(fields.description)];
  if (issues.length > 0) throw invalidRequest(issues);
  return { ...fields, url: await checkEndpointUrl(fields.url, check) };
}

/**
 * Refuses a create when the account already holds its maximum of endpoints. Stores count the account's
 * endpoints inside the transaction that inserts the new one, once no other create of the account can commit in
 * between, so simultaneous creates never exceed it.
 */
export function assertEndpointQuota(endpoints: number): void {
  if (endpoints < ENDPOINT_BOUNDS.maxPerAccount) return;
  throw new AppError(
    "INSUFFICIENT_QUOTA",
    `The account already holds its maximum of ${ENDPOINT_BOUNDS.maxPerAccount} webhook endpoints. Delete one first.`,
  );
}

/** Tests and redeliveries are refused for a disabled endpoint: nothing is ever sent to one. */
export function assertDeliverable(endpoint: { enabled: boolean }): void {
  if (!endpoint.enabled) {
    throw invalid("enabled", "is false: the endpoint is disabled; enable it before sending to it");
  }
}

export function webhookNotFound(id: string): AppError {
  return new AppError("WEBHOOK_NOT_FOUND", `Webhook endpoint ${id} does not exist.`);
}

export function deliveryNotFound(id: string): AppError {
  return new AppError("DELIVERY_NOT_FOUND", `Delivery ${id} does not exist.`);
}

/** A cursor that is not one of the endpoint's deliveries (docs/api/lists-and-pagination.md, "Cursor pagination"). */
export function unknownCursor(field: "before" | "after"): AppError {
  return invalid(field, "is not a delivery of this endpoint");
}
