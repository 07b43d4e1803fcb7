import { type AgentView, agentDeletedData, agentEventData, type PublicEvent } from "@agentry/events";
import { type OutboxConsumer, type PublishEvents, publishingConsumer } from "@agentry/outbox";
import type { JsonValue, OutboxEvent } from "../store/types.js";

function isAgentPayload(value: JsonValue | undefined): value is JsonValue & AgentView {
  return typeof value === "object" && value !== null && !Array.isArray(value) && typeof value.id === "string";
}

/**
 * What receivers get of an outbox event (docs/api/webhooks.md, "Events"): the agent as the REST API presents it,
 * without its secrets, or `{id}` for `agent.deleted`. Undefined for a status change written before events carried
 * the agent: it happened before webhooks existed.
 */
export function webhookEvent(event: OutboxEvent, publicBaseUrl: string): PublicEvent | undefined {
  const common = { id: event.id, type: event.type, accountId: event.accountId, createdAt: event.createdAt };
  if (event.type === "agent.deleted") return { ...common, data: agentDeletedData(event.agentId) };
  const agent = event.payload.agent;
  if (!isAgentPayload(agent)) return undefined;
  return { ...common, data: { ...agentEventData(agent, publicBaseUrl) } };
}

/**
 * The webhooks channel's consumer: every event of a batch, published in one call or a few. The webhooks service
 * skips ids it has, so a batch published again after a failure part-way causes no second delivery.
 */
export function webhooksConsumer(publish: PublishEvents, publicBaseUrl: string): OutboxConsumer<OutboxEvent> {
  return publishingConsumer(publish, (event) => webhookEvent(event, publicBaseUrl));
}
