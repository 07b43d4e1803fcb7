import { afterEach, describe, expect, it, vi } from "vitest";
import { type Beating, Heartbeat, heartbeatFor } from "./heartbeat.js";

afterEach(() => vi.useRealTimers());

describe("Heartbeat", () => {
  it("calls every member on each tick, on one timer that stops with the last member", () => {
    vi.useFakeTimers();
    const heartbeat = new Heartbeat(100);
    const beats: string[] = [];
    const member = (name: string): Beating => ({ beat: () => beats.push(name) });
    const a = member("a");
    const b = member("b");
    heartbeat.add(a);
    heartbeat.add(b);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(250);
    expect(beats).toEqual(["a", "b", "a", "b"]);
    heartbeat.delete(a);
    vi.advanceTimersByTime(100);
    expect(beats.slice(4)).toEqual(["b"]);
    heartbeat.delete(b);
    expect(vi.getTimerCount()).toBe(0);
    expect(heartbeat.size).toBe(0);
  });

  it("shares one heartbeat among periods of the same tick, a tick of a quarter period and at most a second", () => {
    expect(heartbeatFor(15_000)).toBe(heartbeatFor(20_000));
    expect(heartbeatFor(15_000).tickMs).toBe(1000);
    expect(heartbeatFor(40).tickMs).toBe(10);
  });
});
