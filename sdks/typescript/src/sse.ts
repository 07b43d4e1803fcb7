import { createParser } from "eventsource-parser";

/** One server-sent event, its fields as received. */
export interface ServerSentEvent {
  id: string | undefined;
  /** `undefined` when the event had no `event:` field (which the SSE standard calls `message`). */
  event: string | undefined;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/**
 * Reads a `text/event-stream` body as events, by the SSE standard's framing (any of CRLF, LF or CR line ends,
 * multi-line `data:`, comments such as `: ping` skipped, an unfinished last event dropped). Bytes are decoded as
 * UTF-8 across chunk boundaries. `onChunk` runs for every chunk received, comments included, so a caller can
 * time out a stream that has gone silent. Stopping early cancels the body, which closes the connection.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  onChunk?: () => void,
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const pending: ServerSentEvent[] = [];
  const parser = createParser({
    onEvent: (message) => pending.push({ id: message.id, event: message.event, data: message.data }),
  });
  let finished = false;
  let last = "";
  const feed = (text: string) => {
    if (text === "") return;
    last = text;
    parser.feed(text);
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onChunk?.();
      feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) yield pending.shift()!;
    }
    feed(decoder.decode());
    // The parser holds a final CR back in case an LF follows; at the end of the stream none will, so the CR
    // ends its line. A final LF adds nothing more, and an unfinished event stays dropped.
    if (last.endsWith("\r")) parser.feed("\n");
    while (pending.length > 0) yield pending.shift()!;
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
