import type { ServerResponse } from "node:http";

/** A comment line every this many ms of silence keeps proxies and clients from timing the stream out. */
export const PING_INTERVAL_MS = 15_000;

/**
 * Writes a `text/event-stream` response: numbered events (`id:` is the event's sequence number in the stream,
 * from 1), `: ping` comments after each 15 s of silence, and headers that stop proxies from buffering.
 */
export class EventStream {
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly pingIntervalMs = PING_INTERVAL_MS,
  ) {}

  /** Sends the status line and headers at once, so the client sees the stream open before the first token. */
  open(): void {
    this.res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    this.res.flushHeaders();
    this.schedulePing();
  }

  send(event: string, data: unknown): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.seq += 1;
    this.res.write(`id: ${this.seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    this.schedulePing();
  }

  close(): void {
    clearTimeout(this.timer);
    if (!this.res.writableEnded) this.res.end();
  }

  private schedulePing(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.res.writableEnded || this.res.destroyed) return;
      this.res.write(": ping\n\n");
      this.schedulePing();
    }, this.pingIntervalMs);
    this.timer.unref();
  }
}
