import type { ServerResponse } from "node:http";
import { type Beating, heartbeatFor } from "./heartbeat.js";

/** A comment line every this many ms of silence keeps proxies and clients from timing the stream out. */
export const PING_INTERVAL_MS = 15_000;

/**
 * Writes a `text/event-stream` response: numbered events (`id:` is the event's sequence number in the stream,
 * from 1, which `Last-Event-ID` resumes after), `: ping` comments after each 15 s of silence (at most a
 * second later: one timer serves every open stream), and headers that stop proxies from buffering.
 */
export class EventStream implements Beating {
  private seq = 0;
  /** When the stream last wrote anything (`Date.now()`); the process's heartbeat pings it after a silence. */
  private lastWrite = 0;

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
    this.lastWrite = Date.now();
    heartbeatFor(this.pingIntervalMs).add(this);
  }

  /** `id`: the event's number in the message's event log, which a resumed stream goes on from; else the next. */
  send(event: string, data: unknown, id?: number): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.seq = id ?? this.seq + 1;
    const frame = `id: ${this.seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    this.res.write(frame);
    this.record?.(event, frame);
    this.flush();
    this.lastWrite = Date.now();
  }

  close(): void {
    heartbeatFor(this.pingIntervalMs).delete(this);
    if (!this.res.writableEnded) this.res.end();
  }

  beat(now: number): void {
    if (this.res.writableEnded || this.res.destroyed) {
      heartbeatFor(this.pingIntervalMs).delete(this);
      return;
    }
    if (now - this.lastWrite >= this.pingIntervalMs) this.ping(now);
  }

  /**
   * Sends what was written now. Node holds a response's writes until the end of the current tick, and events
   * read together (a provider's last chunks arrive in one packet) are handled in one tick that goes on to store
   * the reply on disk: the client would see the first of them only after that.
   */
  private flush(): void {
    if (this.res.socket?.writableCorked) this.res.socket.uncork();
  }

  private ping(now: number): void {
    this.res.write(": ping\n\n");
    this.flush();
    this.lastWrite = now;
  }
}
