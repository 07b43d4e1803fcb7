import { ERROR_CODES } from "@agentry/errors";
import { PUBLISHED_EVENT_TYPES, TEST_EVENT_TYPE } from "@agentry/events";
import { z } from "zod";
import { SUBSCRIBABLE } from "../validation/webhooks.js";
import { id, nullableTimestamp, timestamp } from "./common.schemas.js";

/*
 * Webhook endpoints, their delivery log (docs/api/webhooks.md), and the bodies deliveries POST, one per event type
 * (the document's `webhooks`).
 */

const webhookFields = {
  id: id("whk", "The endpoint's id"),
  url: z
    .string()
    .meta({ description: "Where deliveries are POSTed.", examples: ["https://example.com/hooks"] }),
  events: z.array(z.enum(SUBSCRIBABLE)).meta({
    description: 'The event types delivered to it, or `["*"]` for every type.',
    examples: [["agent.created", "agent.deleted"]],
  }),
  description: z.string().meta({ description: "Free text of its owner; empty when none was given." }),
  enabled: z.boolean().meta({ description: "Whether events are delivered to it." }),
  disabledReason: z
    .string()
    .nullable()
    .meta({
      description:
        "Why the service disabled it: it answered `410 Gone`, or every attempt failed for 5 days. `null` while it is enabled, or when its owner disabled it.",
      examples: [null],
    }),
  createdAt: timestamp("When it was created."),
  updatedAt: timestamp("When it last changed (an update, a rotation, a disabling)."),
};

export const Webhook = z
  .object(webhookFields)
  .meta({ description: "A webhook endpoint; its secret is never part of it." });

export const WebhookCreated = z.object({
  ...webhookFields,
  secret: z.string().meta({
    description:
      "The signing secret: `whsec_` and the base64 of 24 random bytes. Shown this once (on create and on rotation); verify deliveries with it.",
    examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
  }),
});

export const WebhookDeleted = z.object({
  id: id("whk", "The deleted endpoint's id"),
  deleted: z.literal(true),
});

const DELIVERED_EVENT_TYPES = [...PUBLISHED_EVENT_TYPES, TEST_EVENT_TYPE] as const;

export const Delivery = z
  .object({
    id: id("dlv", "The attempt's id"),
    eventId: id("evt", "The event's id: the `webhook-id` header of every attempt to deliver it"),
    eventType: z.enum(DELIVERED_EVENT_TYPES).meta({ description: "The event's type." }),
    attempt: z.number().int().min(1).meta({
      description:
        "1 for the event's first attempt at this endpoint, then 2, 3, … across retries and redeliveries.",
    }),
    status: z.enum(["pending", "succeeded", "failed"]).meta({
      description:
        "`pending` (waiting for its time, or being attempted), `succeeded` (the endpoint answered 2xx) or `failed` (see `error`).",
    }),
    responseStatus: z
      .number()
      .int()
      .nullable()
      .meta({ description: "The HTTP status the endpoint answered; `null` when it gave none." }),
    durationMs: z
      .number()
      .int()
      .min(0)
      .nullable()
      .meta({ description: "How long the attempt took, in milliseconds; `null` while pending." }),
    error: z
      .string()
      .nullable()
      .meta({
        description: "Why the attempt failed (a status, a timeout, a refused address); `null` unless failed.",
        examples: [null],
      }),
    createdAt: timestamp("When the attempt was scheduled."),
    nextAttemptAt: nullableTimestamp(
      "Pending: when it is due. Failed: when its retry is due; `null` when none follows.",
    ),
  })
  .meta({
    description:
      "One attempt to deliver one event to the endpoint. What the endpoint answered is never shown beyond its status.",
  });

const eventFields = (type: z.ZodType) => ({
  id: id("evt", "The event's id, also its `webhook-id` header: the same on every retry and redelivery"),
  type,
  createdAt: timestamp("When the event happened."),
});

export const AgentDeletedData = z
  .object({ id: id("agt", "The deleted agent's id") })
  .meta({ description: "Data of `agent.deleted`: nothing else of the agent remains." });

export const MessageFailedData = z
  .object({
    agentId: id("agt", "The agent"),
    messageId: id("msg", "The id the reply would have had (a stream's `message.started` named it)"),
    code: z.enum(ERROR_CODES).meta({ description: "The error code, as in the error envelope." }),
    message: z.string(),
  })
  .meta({
    description: "Data of `message.failed`: a send whose reply failed, with the error its caller got.",
  });

export const MessageRequiresActionData = z
  .object({
    agentId: id("agt", "The agent"),
    messageId: id("msg", "The paused message: the id its reply will carry"),
    userId: z.string().nullable().meta({ description: "The user id it was sent with; null when none." }),
    roomId: z.string().nullable().meta({ description: "The room id it was sent with; null when none." }),
    pendingToolCalls: z
      .array(
        z.object({
          id: z
            .string()
            .meta({ description: "The call's id: what `POST …/messages/{messageId}/approve` names." }),
          tool: z.string().meta({ description: 'The tool as the model called it: `"<plugin>__<tool>"`.' }),
          arguments: z.string().meta({ description: "The arguments as JSON text, as the model wrote them." }),
        }),
      )
      .meta({ description: "The calls to approve or refuse." }),
    expiresAt: timestamp(
      "When the wait ends; unanswered by then, the message fails with `APPROVAL_EXPIRED`.",
    ),
  })
  .meta({
    description:
      "Data of `message.requires_action`: a message paused before tool calls that wait for a person's approval.",
  });

export const WebhookTestData = z
  .object({
    webhookId: id("whk", "The endpoint the test was asked for"),
    message: z.string().meta({ examples: ["A test event, sent on request."] }),
  })
  .meta({ description: "Data of `webhook.test`." });

/** The bodies deliveries POST, by event type: the document's `webhooks`. */
export const WEBHOOK_EVENTS = [
  {
    types: ["agent.created", "agent.updated", "agent.status_changed"],
    schemaId: "AgentEvent",
    dataSchemaId: "Agent",
    description:
      "An agent was created, updated (every update), or changed status (by an update, or by the service setting `error` or clearing it). `data` is the agent after the change, as the API returns it, without `settings.secrets`.",
  },
  {
    types: ["agent.deleted"],
    schemaId: "AgentDeletedEvent",
    dataSchemaId: "AgentDeletedData",
    description: "An agent was deleted; `data` is its id.",
  },
  {
    types: ["message.completed"],
    schemaId: "MessageCompletedEvent",
    dataSchemaId: "Reply",
    description:
      "A reply was completed and stored, streamed or not; `data` is the reply object, as the send call returns it.",
  },
  {
    types: ["message.failed"],
    schemaId: "MessageFailedEvent",
    dataSchemaId: "MessageFailedData",
    description:
      "A send failed: the call ended with an error instead of a reply (a caller that went away is no failure); `data` names the message and the error, as in the error envelope.",
  },
  {
    types: ["message.requires_action"],
    schemaId: "MessageRequiresActionEvent",
    dataSchemaId: "MessageRequiresActionData",
    description:
      "A message paused before tool calls that wait for a person's approval (`requireApproval`); answer at `POST /v1/agents/{agentId}/messages/{messageId}/approve`.",
  },
  {
    types: ["budget.threshold"],
    schemaId: "BudgetThresholdEvent",
    dataSchemaId: "BudgetThresholdData",
    description:
      'A budget\'s spend reached 50, 80 or 100 % of its limit; each threshold is sent once per budget and period (docs/api/budgets.md, "Alerts").',
  },
  {
    types: [TEST_EVENT_TYPE],
    schemaId: "WebhookTestEvent",
    dataSchemaId: "WebhookTestData",
    description: "A test event, sent on request to one endpoint.",
  },
] as const;

export function webhookEventSchemas(named: Map<string, z.ZodType>): [string, z.ZodType][] {
  return WEBHOOK_EVENTS.map((event) => {
    const data = named.get(event.dataSchemaId);
    if (!data) throw new Error(`no schema ${event.dataSchemaId} for ${event.schemaId}`);
    const [first, ...others] = event.types;
    const type = others.length === 0 ? z.literal(first) : z.enum([first, ...others]);
    return [
      event.schemaId,
      z.object({ ...eventFields(type.meta({ description: "The event's type." })), data }).meta({
        description: `${event.description} Delivered as the body of a POST, signed per Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`).`,
      }),
    ];
  });
}
