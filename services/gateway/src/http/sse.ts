import type { ServerResponse } from "node:http";

/** A comment line every this many ms of silence keeps proxies and clients from timing the stream out. */
export const PING_INTERVAL_MS = 15_000;

/**
 * Writes a `text/event-stream` response: numbered events (`id:` is the event's sequence number in the stream,
 * from 1, which `Last-Event-ID` resumes after), `: ping` comments after each 15 s of silence, and headers that stop proxies from buffering.
 */
export class EventStream {
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `record` is given every event sent, with its frame as written (not pings). */
  constructor(
    private readonly res: ServerResponse,
    private readonly pingIntervalMs = PING_INTERVAL_MS,
    private readonly record?: (event: string, frame: string) => void,
  ) {}

  /**
   * Sets the status line and headers; they leave with the first event (one write, not two), which the caller
   * sends at once: the reply's `message.started`, before any token.
   */
  open(): void {
    this.res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      "X-Accel-Buffering": "no",
    });
    this.timer = setTimeout(() => this.ping(), this.pingIntervalMs);
    this.timer.unref();
  }

  /** `id`: the event's number in the message's event log, which a resumed stream goes on from; else the next. */
  send(event: string, data: unknown, id?: number): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.seq = id ?? this.seq + 1;
    const frame = `id: ${this.seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    this.res.write(frame);
    this.record?.(event, frame);
    this.flush();
    // The same timer, pushed back: no new one per event.
    this.timer?.refresh();
  }

  close(): void {
    clearTimeout(this.timer);
    if (!this.res.writableEnded) this.res.end();
  }

  /**
   * Sends what was written now. Node holds a response's writes until the end of the current tick, and events
   * read together (a provider's last chunks arrive in one packet) are handled in one tick that goes on to store
   * the reply on disk: the client would see the first of them only after that.
   */
  private flush(): void {
    if (this.res.socket?.writableCorked) this.res.socket.uncork();
  }

  private ping(): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.res.write(": ping\n\n");
    this.flush();
    this.timer?.refresh();
  }
}
