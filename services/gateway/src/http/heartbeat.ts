/** Something that acts now and then while it is held open: a stream's ping, a concurrency slot's renewal. */
export interface Beating {
  /** Called on every tick with the time (`Date.now()`); does its work only when its own period has passed. */
  beat(now: number): void;
}

/**
 * One timer for everything that repeats at about the same pace, instead of one each: thousands of open streams
 * kept a timer of their own for their pings, and another for their concurrency slot's renewal, each with its
 * closure and async context held for as long as the stream was open. Members are called on every tick and decide
 * for themselves whether their period has passed, so a member's work comes at most one tick late, and members
 * added at different moments stay spread over the period.
 */
export class Heartbeat {
  private readonly members = new Set<Beating>();
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly tickMs: number) {}

  add(member: Beating): void {
    this.members.add(member);
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.tickMs);
    // Never what keeps the process alive.
    this.timer.unref();
  }

  delete(member: Beating): void {
    this.members.delete(member);
    if (this.members.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  get size(): number {
    return this.members.size;
  }

  private tick(): void {
    const now = Date.now();
    for (const member of this.members) member.beat(now);
  }
}

const shared = new Map<number, Heartbeat>();

/**
 * The process's heartbeat for things of period `periodMs`: it ticks every quarter of it, and at least every
 * second, so a member's work comes at most that late.
 */
export function heartbeatFor(periodMs: number): Heartbeat {
  const tickMs = Math.max(1, Math.min(1000, Math.floor(periodMs / 4)));
  let heartbeat = shared.get(tickMs);
  if (!heartbeat) {
    heartbeat = new Heartbeat(tickMs);
    shared.set(tickMs, heartbeat);
  }
  return heartbeat;
}
