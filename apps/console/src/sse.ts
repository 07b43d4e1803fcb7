/** One server-sent event: its `id:`, `event:` name (default `message`) and its `data:` lines joined. */
export interface ServerSentEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads a `text/event-stream` body as events, as they arrive (the EventSource parsing rules: lines end in LF,
 * CR or CRLF; `:` lines are comments; a blank line ends an event; an event without data is skipped).
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  let event: { id?: string; event?: string; data: string[] } = { data: [] };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (;;) {
        const end = /\r\n|\r|\n/.exec(buffer);
        // A lone CR at the very end may be the first half of a CRLF: wait for more.
        if (!end || (end[0] === "\r" && end.index === buffer.length - 1 && !done)) break;
        const line = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        if (line === "") {
          if (event.data.length > 0) {
            yield {
              ...(event.id !== undefined ? { id: event.id } : {}),
              event: event.event ?? "message",
              data: event.data.join("\n"),
            };
          }
          event = { data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") event.data.push(value);
        else if (field === "event") event.event = value;
        else if (field === "id") event.id = value;
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}
