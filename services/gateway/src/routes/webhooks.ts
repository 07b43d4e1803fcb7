import { isId, WEBHOOK_BOUNDS } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  type Delivery,
  DeliveryOrder,
  DeliveryStatus,
  type Webhook,
  WebhookSpecSchema,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { FieldMaskSchema, timestampDate } from "@bufbuild/protobuf/wkt";
import { REPLAYED_HEADER } from "../http/idempotency.js";
import { CURSOR_NOTE } from "../openapi/operations.js";
import {
  createWebhookBody,
  listDeliveriesQuery,
  type UpdateWebhookBody,
  updateWebhookBody,
} from "../validation/webhooks.js";
import { defineRoute, type HandlerInput, type Route } from "./define.js";

function isoTime(value: Parameters<typeof timestampDate>[0] | undefined): string | null {
  return value ? timestampDate(value).toISOString() : null;
}

/** An endpoint as the API shows it (docs/api/webhooks.md, "Endpoints"); its secret never, except where a route adds it. */
export function presentWebhook(webhook: Webhook) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: [...webhook.events],
    description: webhook.description,
    enabled: webhook.enabled,
    disabledReason: webhook.disabledReason ?? null,
    createdAt: isoTime(webhook.createTime),
    updatedAt: isoTime(webhook.updateTime),
  };
}

const STATUS_NAMES: Record<DeliveryStatus, "pending" | "succeeded" | "failed"> = {
  [DeliveryStatus.UNSPECIFIED]: "pending",
  [DeliveryStatus.PENDING]: "pending",
  [DeliveryStatus.SUCCEEDED]: "succeeded",
  [DeliveryStatus.FAILED]: "failed",
};

/** One delivery attempt as the log shows it; what the endpoint answered is never part of it. */
export function presentDelivery(delivery: Delivery) {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    attempt: delivery.attempt,
    status: STATUS_NAMES[delivery.status],
    responseStatus: delivery.responseStatus ?? null,
    durationMs: delivery.durationMs ?? null,
    error: delivery.error ?? null,
    createdAt: isoTime(delivery.createTime),
    nextAttemptAt: isoTime(delivery.nextAttemptTime),
  };
}

/** A malformed id cannot name an endpoint: answered like a missing one, without a call. */
function webhookIdParam({ ctx }: HandlerInput): string {
  const id = ctx.params.webhookId ?? "";
  if (!isId("webhook", id)) {
    throw new AppError("WEBHOOK_NOT_FOUND", `Webhook endpoint ${JSON.stringify(id)} does not exist.`);
  }
  return id;
}

/** REST field → WebhookSpec field path of the update mask; the names happen to agree. */
const MASK_PATHS: Record<keyof UpdateWebhookBody, string> = {
  url: "url",
  events: "events",
  description: "description",
  enabled: "enabled",
};

const DISABLED_NOTE =
  "An endpoint that is disabled (`enabled: false`, by you or by the service) is sent nothing: the request is refused with `400 INVALID_REQUEST` naming `enabled`.";

/**
 * Webhook endpoints, their secrets and their delivery logs (docs/api/webhooks.md). Test events and
 * redeliveries make new deliveries, so they spend from the create bucket; a rotation changes the endpoint.
 */
export const webhookRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/webhooks",
    scope: "webhooks:manage",
    limit: "createPerMinute",
    sdk: { resource: ["webhookEndpoints"], method: "create" },
    operationId: "createWebhook",
    tag: "Webhooks",
    summary: "Create a webhook endpoint",
    description: `Registers a URL to receive the account's events, signed per Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\` headers; an HMAC-SHA256 with the endpoint's secret). The answer carries the secret (\`whsec_…\`), the only time it is shown: store it to verify deliveries. The URL is checked and its host resolved before anything is stored (see \`url\`). An account holds at most ${WEBHOOK_BOUNDS.maxPerAccount} endpoints; one more is \`403 INSUFFICIENT_QUOTA\`.`,
    body: { schema: createWebhookBody, component: "CreateWebhookRequest" },
    success: { status: 201, schema: "WebhookCreatedResponse", description: "The endpoint, with its secret." },
    errors: ["INVALID_REQUEST", "INSUFFICIENT_QUOTA", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const body = await input.body();
      const { webhook, secret, replayed } = await gateway.webhooks.createWebhook(
        {
          accountId: principal.accountId,
          spec: create(WebhookSpecSchema, {
            url: body.url,
            events: body.events,
            description: body.description ?? "",
            ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          }),
          // The endpoint keeps the key: run again after a gateway stopped before keeping the answer, the create
          // answers the endpoint it made.
          idempotencyKeyHash: ctx.state.idempotency?.keyHash ?? "",
        },
        rpc,
      );
      if (replayed) ctx.set(REPLAYED_HEADER, "true");
      ctx.status = 201;
      ctx.body = { success: true, data: { ...presentWebhook(webhook!), secret } };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/webhooks",
    scope: "webhooks:manage",
    limit: "listPerMinute",
    sdk: { resource: ["webhookEndpoints"], method: "list" },
    operationId: "listWebhooks",
    tag: "Webhooks",
    summary: "List webhook endpoints",
    description: `Every endpoint of the account (at most ${WEBHOOK_BOUNDS.maxPerAccount}), newest first, without their secrets.`,
    success: { status: 200, schema: "WebhookListResponse", description: "The account's endpoints." },
    errors: [],
    async handler({ ctx, gateway, principal, rpc }) {
      const { webhooks } = await gateway.webhooks.listWebhooks({ accountId: principal.accountId }, rpc);
      ctx.body = { success: true, data: webhooks.map(presentWebhook) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/webhooks/:webhookId",
    scope: "webhooks:manage",
    limit: "getPerMinute",
    sdk: { resource: ["webhookEndpoints"], method: "get" },
    operationId: "getWebhook",
    tag: "Webhooks",
    summary: "Get a webhook endpoint",
    description: "One endpoint, without its secret.",
    success: { status: 200, schema: "WebhookResponse", description: "The endpoint." },
    errors: ["WEBHOOK_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = webhookIdParam(input);
      const { webhook } = await gateway.webhooks.getWebhook({ accountId: principal.accountId, id }, rpc);
      ctx.body = { success: true, data: presentWebhook(webhook!) };
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/v1/webhooks/:webhookId",
    scope: "webhooks:manage",
    limit: "updatePerMinute",
    sdk: { resource: ["webhookEndpoints"], method: "update" },
    operationId: "updateWebhook",
    tag: "Webhooks",
    summary: "Update a webhook endpoint",
    description:
      "Changes only the fields supplied. A new `url` is checked as on create. `enabled: false` stops deliveries (pending attempts fail, nothing stale arrives later); `enabled: true` resumes them and clears `disabledReason`.",
    body: { schema: updateWebhookBody, component: "UpdateWebhookRequest" },
    success: { status: 200, schema: "WebhookResponse", description: "The endpoint as updated." },
    errors: ["INVALID_REQUEST", "WEBHOOK_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = webhookIdParam(input);
      const body = await input.body();
      const paths = (Object.keys(MASK_PATHS) as (keyof UpdateWebhookBody)[])
        .filter((field) => body[field] !== undefined)
        .map((field) => MASK_PATHS[field]);
      const { webhook } = await gateway.webhooks.updateWebhook(
        {
          accountId: principal.accountId,
          id,
          spec: create(WebhookSpecSchema, {
            url: body.url ?? "",
            events: body.events ?? [],
            description: body.description ?? "",
            ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          }),
          updateMask: create(FieldMaskSchema, { paths }),
        },
        rpc,
      );
      ctx.body = { success: true, data: presentWebhook(webhook!) };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/webhooks/:webhookId",
    scope: "webhooks:manage",
    limit: "deletePerMinute",
    sdk: { resource: ["webhookEndpoints"], method: "delete" },
    operationId: "deleteWebhook",
    tag: "Webhooks",
    summary: "Delete a webhook endpoint",
    description: "Deletes the endpoint and its delivery log; nothing more is sent to it.",
    success: { status: 200, schema: "WebhookDeletedResponse", description: "The endpoint was deleted." },
    errors: ["WEBHOOK_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = webhookIdParam(input);
      await gateway.webhooks.deleteWebhook({ accountId: principal.accountId, id }, rpc);
      ctx.body = { success: true, data: { id, deleted: true } };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/v1/webhooks/:webhookId/rotate-secret",
    scope: "webhooks:manage",
    limit: "updatePerMinute",
    sdk: { resource: ["webhookEndpoints"], method: "rotateSecret" },
    operationId: "rotateWebhookSecret",
    tag: "Webhooks",
    summary: "Rotate a webhook endpoint's secret",
    description:
      "Gives the endpoint a new secret, shown this once. For 24 hours deliveries carry a signature by the previous secret as well (the `webhook-signature` header then holds two), so a receiver can switch without losing any; a second rotation within those hours retires the first secret at once. Not retried by the SDKs: each call makes a new secret.",
    success: {
      status: 200,
      schema: "WebhookCreatedResponse",
      description: "The endpoint, with its new secret.",
    },
    errors: ["WEBHOOK_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = webhookIdParam(input);
      const { webhook, secret } = await gateway.webhooks.rotateWebhookSecret(
        { accountId: principal.accountId, id },
        rpc,
      );
      ctx.body = { success: true, data: { ...presentWebhook(webhook!), secret } };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/v1/webhooks/:webhookId/test",
    scope: "webhooks:manage",
    limit: "createPerMinute",
    sdk: { resource: ["webhookEndpoints"], method: "sendTestEvent" },
    operationId: "sendWebhookTest",
    tag: "Webhooks",
    summary: "Send a test event",
    description: `Sends a \`webhook.test\` event (\`data\`: \`{webhookId, message}\`) to this endpoint alone, whatever events it subscribes to, signed and retried like any other. ${DISABLED_NOTE}`,
    success: {
      status: 200,
      schema: "DeliveryResponse",
      description: "The test event's first delivery attempt, pending; the delivery log shows how it went.",
    },
    errors: ["INVALID_REQUEST", "WEBHOOK_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = webhookIdParam(input);
      const { delivery } = await gateway.webhooks.sendTestEvent({ accountId: principal.accountId, id }, rpc);
      ctx.body = { success: true, data: presentDelivery(delivery!) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/webhooks/:webhookId/deliveries",
    scope: "webhooks:manage",
    limit: "listPerMinute",
    sdk: { resource: ["webhookEndpoints", "deliveries"], method: "list" },
    operationId: "listWebhookDeliveries",
    tag: "Webhooks",
    summary: "List an endpoint's deliveries",
    description: `The endpoint's delivery log, one entry per attempt (a retry or a redelivery is an entry of its own, with the same \`eventId\`), newest first unless \`order=asc\`. What the endpoint answered is never shown beyond its status. ${CURSOR_NOTE.replace("or another agent's", "or another endpoint's")}`,
    query: listDeliveriesQuery,
    pagination: "cursor",
    success: { status: 200, schema: "DeliveryListResponse", description: "One page of the delivery log." },
    errors: ["INVALID_REQUEST", "WEBHOOK_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const webhookId = webhookIdParam(input);
      const query = input.query();
      const { deliveries, hasMore } = await gateway.webhooks.listDeliveries(
        {
          accountId: principal.accountId,
          webhookId,
          limit: query.limit,
          before: query.before ?? "",
          after: query.after ?? "",
          order: query.order === "asc" ? DeliveryOrder.ASC : DeliveryOrder.DESC,
        },
        rpc,
      );
      ctx.body = {
        success: true,
        data: deliveries.map(presentDelivery),
        pagination: { limit: query.limit, hasMore },
      };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/v1/webhooks/:webhookId/deliveries/:deliveryId/redeliver",
    scope: "webhooks:manage",
    limit: "createPerMinute",
    sdk: { resource: ["webhookEndpoints", "deliveries"], method: "redeliver" },
    operationId: "redeliverWebhookDelivery",
    tag: "Webhooks",
    summary: "Redeliver an event",
    description: `Schedules a new attempt, due now, of the event of one of the endpoint's deliveries: a new delivery id, the same event and \`webhook-id\`, so a receiver that has it already can tell. It is attempted once; a failure is not retried. ${DISABLED_NOTE}`,
    success: { status: 200, schema: "DeliveryResponse", description: "The new attempt, pending." },
    errors: ["INVALID_REQUEST", "WEBHOOK_NOT_FOUND", "DELIVERY_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const webhookId = webhookIdParam(input);
      const deliveryId = input.params.deliveryId;
      if (!isId("delivery", deliveryId)) {
        throw new AppError("DELIVERY_NOT_FOUND", `Delivery ${JSON.stringify(deliveryId)} does not exist.`);
      }
      const { delivery } = await gateway.webhooks.redeliverDelivery(
        { accountId: principal.accountId, webhookId, deliveryId },
        rpc,
      );
      ctx.body = { success: true, data: presentDelivery(delivery!) };
    },
  }),
];
