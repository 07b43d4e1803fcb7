import { WEBHOOK_BOUNDS } from "@agentry/core";
import { PUBLISHED_EVENT_TYPES } from "@agentry/events";
import { z } from "zod";
import { cursorLimit, cursorOrder, cursors, oneCursor } from "./history.js";
import { charCount, TRIMMED_SPACE } from "./text.js";

/*
 * Bodies and queries of the webhook routes (docs/api/webhooks.md, "Endpoints"). The webhooks service checks the same rules
 * again, and what only it can check (the URL's scheme as the deployment allows it, and where its host resolves)
 * is said in the descriptions.
 */

/** What an endpoint subscribes to every event type with; alone in `events`. */
export const ALL_EVENTS = "*";

export const SUBSCRIBABLE = [ALL_EVENTS, ...PUBLISHED_EVENT_TYPES] as const;

/**
 * An http(s) URL, the scheme in any case, with no whitespace or NUL in it. The rest of URL syntax, and https and
 * public addresses, are the webhooks service's to check.
 */
export const ENDPOINT_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://[^${TRIMMED_SPACE}\\u0000]+$`;
const URL_REGEX = new RegExp(ENDPOINT_URL_PATTERN);

const url = z
  .string({ error: "must be a string" })
  .refine((value) => URL_REGEX.test(value), "must be an https URL")
  .refine(
    (value) => charCount(value) <= WEBHOOK_BOUNDS.urlMaxLength,
    `must be at most ${WEBHOOK_BOUNDS.urlMaxLength} characters`,
  )
  .meta({
    description: `Where deliveries are POSTed: an \`https\` URL of at most ${WEBHOOK_BOUNDS.urlMaxLength} characters, without credentials, whose host resolves only to public addresses (no loopback, private, link-local, CGNAT, unique-local or cloud metadata address), which is checked now and again at each delivery; otherwise \`400 INVALID_REQUEST\` naming \`url\`. A deployment run with \`ALLOW_PRIVATE_NETWORKS=true\` (development and tests only) also takes \`http\` and private addresses. Redirects are not followed.`,
    maxLength: WEBHOOK_BOUNDS.urlMaxLength,
    pattern: ENDPOINT_URL_PATTERN,
    examples: ["https://example.com/agentry/webhooks"],
  });

/** JSON Schema's way of saying that `"*"` comes alone (the `then` of an `if`). */
const then = { maxItems: 1 };

const events = z
  .array(z.enum(SUBSCRIBABLE, { error: `must be one of: ${SUBSCRIBABLE.join(", ")}` }), {
    error: "must be an array of event types",
  })
  .min(1, `must list at least one event type, or "${ALL_EVENTS}" for all`)
  .refine((types) => new Set(types).size === types.length, "must not repeat an event type")
  .refine(
    (types) => !types.includes(ALL_EVENTS) || types.length === 1,
    `must be ["${ALL_EVENTS}"] alone or a list of event types`,
  )
  .meta({
    description: `The event types delivered to the endpoint, each at most once, or \`["${ALL_EVENTS}"]\` alone for every type (those added later included). \`webhook.test\` events are sent on request whatever it lists.`,
    uniqueItems: true,
    if: { contains: { const: ALL_EVENTS } },
    then,
    examples: [["agent.created", "agent.deleted"], [ALL_EVENTS]],
  });

const description = z
  .string({ error: "must be a string" })
  .refine(
    (value) => charCount(value) <= WEBHOOK_BOUNDS.descriptionMaxLength,
    `must be at most ${WEBHOOK_BOUNDS.descriptionMaxLength} characters`,
  )
  .meta({
    description: `Free text for you, at most ${WEBHOOK_BOUNDS.descriptionMaxLength} characters, kept as sent.`,
    maxLength: WEBHOOK_BOUNDS.descriptionMaxLength,
    examples: ["Production alerts"],
  });

const enabled = z.boolean({ error: "must be a boolean" });

export const createWebhookBody = z.strictObject(
  {
    url,
    events,
    description: description.optional().meta({
      description: `Free text for you, at most ${WEBHOOK_BOUNDS.descriptionMaxLength} characters, kept as sent; unset: empty.`,
    }),
    enabled: enabled.optional().meta({ description: "Whether events are delivered to it; unset: `true`." }),
  },
  { error: "must be a JSON object" },
);

export const updateWebhookBody = z.strictObject(
  {
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: enabled.optional().meta({
      description:
        "`false` stops deliveries: its pending attempts fail and nothing more is sent until it is `true` again, which also clears `disabledReason`.",
    }),
  },
  { error: "must be a JSON object" },
);

export type CreateWebhookBody = z.infer<typeof createWebhookBody>;
export type UpdateWebhookBody = z.infer<typeof updateWebhookBody>;

export const listDeliveriesQuery = z
  .strictObject({
    limit: cursorLimit,
    ...cursors("delivery", "dlv", "delivery", "deliveries"),
    order: cursorOrder,
  })
  .superRefine(oneCursor);

export type ListDeliveriesQuery = z.infer<typeof listDeliveriesQuery>;
