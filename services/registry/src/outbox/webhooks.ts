import { type AgentView, agentDeletedData, agentEventData, type PublicEvent } from "@agentry/events";
import type { WebhookService } from "@agentry/proto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { CallOptions, Client } from "@connectrpc/connect";
import type { JsonValue, OutboxEvent } from "../store/types.js";
import { type OutboxConsumer, wholeBatches } from "./relay.js";

/** Hands public events to the webhooks service; resolves once it has stored them. */
export type PublishEvents = (events: PublicEvent[]) => Promise<void>;

/** How much event data one PublishEvents call carries at most: an agent can hold about a MiB of its own. */
const PUBLISH_BYTES = 4 * 1024 * 1024;

function isAgentPayload(value: JsonValue | undefined): value is JsonValue & AgentView {
  return typeof value === "object" && value !== null && !Array.isArray(value) && typeof value.id === "string";
}

/**
 * What receivers get of an outbox event (decisions.md, "Webhooks"): the agent as the REST API presents it,
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

/** Groups events into calls of at most PUBLISH_BYTES of data each (an event larger than that goes alone). */
function* calls(events: readonly PublicEvent[]): Generator<PublicEvent[]> {
  let call: PublicEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = Buffer.byteLength(JSON.stringify(event.data));
    if (call.length > 0 && bytes + size > PUBLISH_BYTES) {
      yield call;
      call = [];
      bytes = 0;
    }
    call.push(event);
    bytes += size;
  }
  if (call.length > 0) yield call;
}

/**
 * The webhooks channel's consumer: every event of a batch, published in one call or a few. The webhooks service
 * skips ids it has, so a batch published again after a failure part-way causes no second delivery.
 */
export function webhooksConsumer(publish: PublishEvents, publicBaseUrl: string): OutboxConsumer {
  return wholeBatches(async (events) => {
    const published = events.flatMap((event) => webhookEvent(event, publicBaseUrl) ?? []);
    for (const call of calls(published)) await publish(call);
  });
}

/** `PublishEvents` over a WebhookService client, for the composition roots. */
export function publishWith(client: Client<typeof WebhookService>, options: CallOptions = {}): PublishEvents {
  return async (events) => {
    await client.publishEvents(
      {
        events: events.map((event) => ({
          id: event.id,
          type: event.type,
          accountId: event.accountId,
          createTime: timestampFromDate(new Date(event.createdAt)),
          data: event.data,
        })),
      },
      options,
    );
  };
}
