import { IDEMPOTENCY_KEY_TTL_MS, isId, isSha256Hex, newId, PAGE_LIMIT } from "@agentry/core";
import type { FieldIssue } from "@agentry/errors";
import { invalid, invalidRequest } from "@agentry/errors";
import {
  auditEventMessage,
  DeliveryOrder,
  type PublishEventsRequest,
  plainAuditQuery,
  type UpdateWebhookRequest,
  type WebhookService,
  type WebhookSpec,
} from "@agentry/proto";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  checkEndpointUrl,
  checkNewEndpoint,
  descriptionIssues,
  type EndpointFields,
  eventsIssues,
  webhookNotFound,
} from "../domain/endpoint.js";
import { isPublishedEventType, PUBLISHED_EVENT_TYPES } from "../domain/events.js";
import { generateSecret, PREVIOUS_SECRET_VALID_MS } from "../domain/signing.js";
import type { EndpointRecord, EventRecord } from "../store/types.js";
import type { WebhooksContext } from "./context.js";
import { deliveryToProto, fromTimestamp, webhookToProto } from "./convert.js";

/** Events one PublishEvents call may carry. */
export const PUBLISH_BATCH_MAX = 1000;

function accountOf(request: { accountId: string }): string {
  if (request.accountId === "") throw invalid("account_id", "is required");
  return request.accountId;
}

function found(endpoint: EndpointRecord | null, id: string): EndpointRecord {
  if (!endpoint) throw webhookNotFound(id);
  return endpoint;
}

/** The fields of a new endpoint; `enabled` unset means true. */
function fieldsOf(spec: WebhookSpec | undefined): EndpointFields {
  if (!spec) throw invalid("spec", "is required");
  return { url: spec.url, events: spec.events, description: spec.description, enabled: spec.enabled ?? true };
}

/** The patch an update mask names, each field checked as on create, every problem reported at once. */
async function patchOf(
  request: UpdateWebhookRequest,
  ctx: WebhooksContext,
): Promise<Partial<EndpointFields>> {
  const spec = request.spec;
  const patch: Partial<EndpointFields> = {};
  const issues: FieldIssue[] = [];
  for (const path of request.updateMask?.paths ?? []) {
    switch (path) {
      case "url":
        patch.url = spec?.url ?? "";
        break;
      case "events":
        patch.events = spec?.events ?? [];
        issues.push(...eventsIssues(patch.events));
        break;
      case "description":
        patch.description = spec?.description ?? "";
        issues.push(...descriptionIssues(patch.description));
        break;
      case "enabled":
        if (spec?.enabled === undefined) issues.push({ field: "enabled", issue: "must be true or false" });
        else patch.enabled = spec.enabled;
        break;
      default:
        issues.push({
          field: "update_mask",
          issue: `names ${JSON.stringify(path)}, which is not a field of WebhookSpec`,
        });
    }
  }
  if (issues.length > 0) throw invalidRequest(issues);
  if (patch.url !== undefined) patch.url = await checkEndpointUrl(patch.url, ctx.urls);
  return patch;
}

/** The events of a PublishEvents call as stored, each checked; an id repeated in the batch counts once. */
export function eventsOf(request: PublishEventsRequest): EventRecord[] {
  if (request.events.length > PUBLISH_BATCH_MAX) {
    throw invalid("events", `must hold at most ${PUBLISH_BATCH_MAX} events`);
  }
  const issues: FieldIssue[] = [];
  const events = new Map<string, EventRecord>();
  request.events.forEach((event, index) => {
    const at = `events[${index}]`;
    const before = issues.length;
    if (!isId("event", event.id))
      issues.push({ field: `${at}.id`, issue: "must be evt_ followed by a ULID" });
    if (!isPublishedEventType(event.type)) {
      issues.push({ field: `${at}.type`, issue: `must be one of ${PUBLISHED_EVENT_TYPES.join(", ")}` });
    }
    if (event.accountId === "") issues.push({ field: `${at}.account_id`, issue: "is required" });
    if (!event.createTime) issues.push({ field: `${at}.create_time`, issue: "is required" });
    if (issues.length > before || !event.createTime || events.has(event.id)) return;
    events.set(event.id, {
      id: event.id,
      type: event.type,
      accountId: event.accountId,
      createdAt: fromTimestamp(event.createTime),
      data: JSON.stringify(event.data ?? {}),
    });
  });
  if (issues.length > 0) throw invalidRequest(issues);
  return [...events.values()];
}

/** A key's SHA-256 as the gateway passes it, checked. */
function checkedKeyHash(value: string): string {
  if (!isSha256Hex(value)) {
    throw invalidRequest([{ field: "idempotency_key_hash", issue: "must be a lowercase hex SHA-256" }]);
  }
  return value;
}

export function webhookService(ctx: WebhooksContext): ServiceImpl<typeof WebhookService> {
  const { store, logger, secrets } = ctx;
  return {
    async createWebhook(request) {
      const accountId = accountOf(request);
      const keyHash =
        request.idempotencyKeyHash === "" ? undefined : checkedKeyHash(request.idempotencyKeyHash);
      if (keyHash) {
        // Made under this key by a create whose caller stopped before keeping its answer: that endpoint again.
        const since = new Date(Date.now() - IDEMPOTENCY_KEY_TTL_MS).toISOString();
        const made = await store.endpointMadeUnderKey(accountId, keyHash, since);
        if (made) {
          const secret = secrets.open(made.endpoint.id, made.secret);
          return { webhook: webhookToProto(made.endpoint), secret, replayed: true };
        }
      }
      const fields = await checkNewEndpoint(fieldsOf(request.spec), ctx.urls);
      const id = newId("webhook");
      const secret = generateSecret();
      const endpoint = await store.createEndpoint({
        id,
        accountId,
        fields,
        secret: secrets.seal(id, secret),
        ...(keyHash ? { idempotencyKeyHash: keyHash } : {}),
      });
      logger.info({ accountId, webhookId: id }, "webhook endpoint created");
      return { webhook: webhookToProto(endpoint), secret };
    },

    async listWebhooks(request) {
      const endpoints = await store.listEndpoints(accountOf(request));
      return { webhooks: endpoints.map(webhookToProto) };
    },

    async getWebhook(request) {
      const endpoint = found(await store.getEndpoint(accountOf(request), request.id), request.id);
      return { webhook: webhookToProto(endpoint) };
    },

    async updateWebhook(request) {
      const accountId = accountOf(request);
      const patch = await patchOf(request, ctx);
      const endpoint = found(await store.updateEndpoint(accountId, request.id, patch), request.id);
      logger.info(
        { accountId, webhookId: endpoint.id, fields: Object.keys(patch) },
        "webhook endpoint updated",
      );
      return { webhook: webhookToProto(endpoint) };
    },

    async deleteWebhook(request) {
      const accountId = accountOf(request);
      if (!(await store.deleteEndpoint(accountId, request.id))) throw webhookNotFound(request.id);
      logger.info({ accountId, webhookId: request.id }, "webhook endpoint deleted");
      return {};
    },

    async rotateWebhookSecret(request) {
      const accountId = accountOf(request);
      const secret = generateSecret();
      const endpoint = found(
        await store.rotateSecret(
          accountId,
          request.id,
          secrets.seal(request.id, secret),
          PREVIOUS_SECRET_VALID_MS,
        ),
        request.id,
      );
      logger.info({ accountId, webhookId: endpoint.id }, "webhook secret rotated");
      return { webhook: webhookToProto(endpoint), secret };
    },

    async sendTestEvent(request) {
      const accountId = accountOf(request);
      const event: EventRecord = {
        id: newId("event"),
        type: "webhook.test",
        accountId,
        createdAt: new Date().toISOString(),
        data: JSON.stringify({ webhookId: request.id, message: "A test event, sent on request." }),
      };
      const delivery = await store.sendTestEvent(accountId, request.id, event);
      ctx.scheduled();
      return { eventId: event.id, delivery: deliveryToProto(delivery) };
    },

    async listDeliveries(request) {
      const accountId = accountOf(request);
      const limit = request.limit === 0 ? PAGE_LIMIT.default : request.limit;
      const issues: FieldIssue[] = [];
      if (limit < 1 || limit > PAGE_LIMIT.max) {
        issues.push({ field: "limit", issue: `must be 1 to ${PAGE_LIMIT.max}` });
      }
      if (request.before !== "" && request.after !== "") {
        issues.push({ field: "before", issue: "must not be given with after" });
      }
      for (const field of ["before", "after"] as const) {
        if (request[field] !== "" && !isId("delivery", request[field])) {
          issues.push({ field, issue: "is not a delivery of this endpoint" });
        }
      }
      if (issues.length > 0) throw invalidRequest(issues);
      const page = await store.listDeliveries(accountId, request.webhookId, {
        limit,
        order: request.order === DeliveryOrder.ASC ? "asc" : "desc",
        ...(request.before !== "" ? { before: request.before } : {}),
        ...(request.after !== "" ? { after: request.after } : {}),
      });
      if (!page) throw webhookNotFound(request.webhookId);
      return { deliveries: page.items.map(deliveryToProto), hasMore: page.hasMore };
    },

    async redeliverDelivery(request) {
      const accountId = accountOf(request);
      const delivery = await store.redeliver(accountId, request.webhookId, request.deliveryId);
      ctx.scheduled();
      logger.info(
        { accountId, webhookId: request.webhookId, deliveryId: delivery.id, of: request.deliveryId },
        "webhook delivery scheduled again",
      );
      return { delivery: deliveryToProto(delivery) };
    },

    async publishEvents(request) {
      const { accepted, deliveries } = await store.publishEvents(eventsOf(request));
      if (deliveries > 0) ctx.scheduled();
      return { accepted, deliveries };
    },
    async eraseUserEvents(request) {
      return { deletedEvents: await store.eraseUserEvents(request.accountId, request.userId) };
    },
    async listWebhookAuditEvents(request) {
      const { accountId, ...query } = plainAuditQuery(request.query);
      const page = await store.listAuditEvents(accountId, query);
      return { events: page.items.map(auditEventMessage), hasMore: page.hasMore };
    },
  };
}
