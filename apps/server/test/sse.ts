/** One server-sent event as received. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: unknown;
}

/** Reads a whole `text/event-stream` body into events and comment lines, per the SSE framing rules. */
export function parseEventStream(text: string): { events: SseEvent[]; comments: string[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === "") continue;
    const event: { id?: string; event?: string; data: string[] } = { data: [] };
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(":")) {
        comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") event.id = value;
      else if (field === "event") event.event = value;
      else if (field === "data") event.data.push(value);
    }
    if (event.data.length > 0 || event.event) {
      events.push({
        ...(event.id !== undefined ? { id: event.id } : {}),
        ...(event.event !== undefined ? { event: event.event } : {}),
        data: event.data.length ? JSON.parse(event.data.join("\n")) : null,
      });
    }
  }
  return { events, comments };
}

/**
 * Reads a stream's events as they come; stops (dropping the connection) after `cutAfter` events when given.
 * Answers the events read, parsed.
 */
export async function readEvents(
  url: string,
  init: RequestInit & { cutAfter?: number },
): Promise<{ status: number; events: SseEvent[]; body: string }> {
  const controller = new AbortController();
  const res = await fetch(url, { ...init, signal: controller.signal });
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
    return { status: res.status, events: [], body: await res.text() };
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
    const complete = text.slice(0, text.lastIndexOf("\n\n") + 2);
    const { events } = parseEventStream(complete);
    if (init.cutAfter !== undefined && events.length >= init.cutAfter) {
      controller.abort();
      return { status: res.status, events: events.slice(0, init.cutAfter), body: complete };
    }
  }
  return { status: res.status, events: parseEventStream(text).events, body: text };
}
