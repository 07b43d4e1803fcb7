import { isId } from "@agentry/core";
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
import { readJsonBody } from "../http/body.js";
import { REPLAYED_HEADER } from "../http/idempotency.js";
import { parseOrThrow } from "../validation/issues.js";
import {
  createWebhookBody,
  listDeliveriesQuery,
  type UpdateWebhookBody,
  updateWebhookBody,
} from "../validation/webhooks.js";
import type { HandlerInput, Route } from "./table.js";

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

async function createWebhook({ ctx, gateway, principal, rpc }: HandlerInput): Promise<void> {
  const body = parseOrThrow(createWebhookBody, await readJsonBody(ctx), "request body");
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
}

async function listWebhooks({ ctx, gateway, principal, rpc }: HandlerInput): Promise<void> {
  const { webhooks } = await gateway.webhooks.listWebhooks({ accountId: principal.accountId }, rpc);
  ctx.body = { success: true, data: webhooks.map(presentWebhook) };
}

async function getWebhook(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const id = webhookIdParam(input);
  const { webhook } = await gateway.webhooks.getWebhook({ accountId: principal.accountId, id }, rpc);
  ctx.body = { success: true, data: presentWebhook(webhook!) };
}

async function updateWebhook(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const id = webhookIdParam(input);
  const body = parseOrThrow(updateWebhookBody, await readJsonBody(ctx), "request body");
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
}

async function deleteWebhook(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const id = webhookIdParam(input);
  await gateway.webhooks.deleteWebhook({ accountId: principal.accountId, id }, rpc);
  ctx.body = { success: true, data: { id, deleted: true } };
}

async function rotateSecret(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const id = webhookIdParam(input);
  const { webhook, secret } = await gateway.webhooks.rotateWebhookSecret(
    { accountId: principal.accountId, id },
    rpc,
  );
  ctx.body = { success: true, data: { ...presentWebhook(webhook!), secret } };
}

async function sendTestEvent(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const id = webhookIdParam(input);
  const { delivery } = await gateway.webhooks.sendTestEvent({ accountId: principal.accountId, id }, rpc);
  ctx.body = { success: true, data: presentDelivery(delivery!) };
}

async function listDeliveries(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const webhookId = webhookIdParam(input);
  const query = parseOrThrow(listDeliveriesQuery, ctx.query, "query parameters");
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
}

async function redeliver(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const webhookId = webhookIdParam(input);
  const deliveryId = ctx.params.deliveryId ?? "";
  if (!isId("delivery", deliveryId)) {
    throw new AppError("DELIVERY_NOT_FOUND", `Delivery ${JSON.stringify(deliveryId)} does not exist.`);
  }
  const { delivery } = await gateway.webhooks.redeliverDelivery(
    { accountId: principal.accountId, webhookId, deliveryId },
    rpc,
  );
  ctx.body = { success: true, data: presentDelivery(delivery!) };
}

/**
 * Webhook endpoints, their secrets and their delivery logs (docs/api/webhooks.md). Test events and
 * redeliveries make new deliveries, so they spend from the create bucket; a rotation changes the endpoint.
 */
export const webhookRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/webhooks",
    scope: "webhooks:manage",
    limit: "createPerMinute",
    handle: createWebhook,
  },
  {
    method: "GET",
    path: "/v1/webhooks",
    scope: "webhooks:manage",
    limit: "listPerMinute",
    handle: listWebhooks,
  },
  {
    method: "GET",
    path: "/v1/webhooks/:webhookId",
    scope: "webhooks:manage",
    limit: "getPerMinute",
    handle: getWebhook,
  },
  {
    method: "PATCH",
    path: "/v1/webhooks/:webhookId",
    scope: "webhooks:manage",
    limit: "updatePerMinute",
    handle: updateWebhook,
  },
  {
    method: "DELETE",
    path: "/v1/webhooks/:webhookId",
    scope: "webhooks:manage",
    limit: "deletePerMinute",
    handle: deleteWebhook,
  },
  {
    method: "POST",
    path: "/v1/webhooks/:webhookId/rotate-secret",
    scope: "webhooks:manage",
    limit: "updatePerMinute",
    handle: rotateSecret,
  },
  {
    method: "POST",
    path: "/v1/webhooks/:webhookId/test",
    scope: "webhooks:manage",
    limit: "createPerMinute",
    handle: sendTestEvent,
  },
  {
    method: "GET",
    path: "/v1/webhooks/:webhookId/deliveries",
    scope: "webhooks:manage",
    limit: "listPerMinute",
    handle: listDeliveries,
  },
  {
    method: "POST",
    path: "/v1/webhooks/:webhookId/deliveries/:deliveryId/redeliver",
    scope: "webhooks:manage",
    limit: "createPerMinute",
    handle: redeliver,
  },
];
