import { type Delivery, DeliverySchema, DeliveryStatus, type Webhook, WebhookSchema } from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { DeliveryRecord, EndpointRecord, DeliveryStatus as Status } from "../store/types.js";

export function toTimestamp(iso: string): Timestamp {
  return timestampFromDate(new Date(iso));
}

export function fromTimestamp(timestamp: Timestamp): string {
  return timestampDate(timestamp).toISOString();
}

export function webhookToProto(endpoint: EndpointRecord): Webhook {
  return create(WebhookSchema, {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
    ...(endpoint.disabledReason !== null ? { disabledReason: endpoint.disabledReason } : {}),
    createTime: toTimestamp(endpoint.createdAt),
    updateTime: toTimestamp(endpoint.updatedAt),
  });
}

const STATUS_TO_PROTO: Record<Status, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  succeeded: DeliveryStatus.SUCCEEDED,
  failed: DeliveryStatus.FAILED,
};

export function deliveryStatusFromProto(status: DeliveryStatus): Status | undefined {
  switch (status) {
    case DeliveryStatus.PENDING:
      return "pending";
    case DeliveryStatus.SUCCEEDED:
      return "succeeded";
    case DeliveryStatus.FAILED:
      return "failed";
    default:
      return undefined;
  }
}

export function deliveryToProto(delivery: DeliveryRecord): Delivery {
  return create(DeliverySchema, {
    id: delivery.id,
    webhookId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    attempt: delivery.attempt,
    status: STATUS_TO_PROTO[delivery.status],
    ...(delivery.responseStatus !== null ? { responseStatus: delivery.responseStatus } : {}),
    ...(delivery.durationMs !== null ? { durationMs: delivery.durationMs } : {}),
    ...(delivery.error !== null ? { error: delivery.error } : {}),
    createTime: toTimestamp(delivery.createdAt),
    ...(delivery.nextAttemptAt !== null ? { nextAttemptTime: toTimestamp(delivery.nextAttemptAt) } : {}),
  });
}
