import type { PublicEvent } from "@agentry/events";
import type { WebhookService } from "@agentry/proto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { CallOptions, Client } from "@connectrpc/connect";
import { type OutboxConsumer, wholeBatches } from "./relay.js";

/** Hands public events to the webhooks service; resolves once it has stored them. */
export type PublishEvents = (events: PublicEvent[]) => Promise<void>;

/** How much event data one PublishEvents call carries at most: an agent can hold about a MiB of its own. */
export const PUBLISH_BYTES = 4 * 1024 * 1024;

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
 * A consumer that publishes every event of a batch to the webhooks service, in one call or a few, as `present`
 * turns it into what receivers get (undefined: nothing to publish for it). The batch counts as delivered only once
 * every call has been confirmed; the webhooks service skips ids it has, so a batch published again after a failure
 * part-way causes no second delivery.
 */
export function publishingConsumer<E>(
  publish: PublishEvents,
  present: (event: E) => PublicEvent | undefined,
): OutboxConsumer<E> {
  return wholeBatches(async (events) => {
    const published = events.flatMap((event) => present(event) ?? []);
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
