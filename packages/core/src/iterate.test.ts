import { describe, expect, it } from "vitest";
import { mapAsyncIterable } from "./iterate.js";

async function* numbers(count: number, failAt?: number) {
  for (let i = 1; i <= count; i++) {
    if (i === failAt) throw new Error(`failed at ${i}`);
    yield i;
  }
}

function recorder() {
  const events: string[] = [];
  return {
    events,
    steps: {
      map: (n: number) => n * 10,
      onEnd: () => events.push("end"),
      onError: (error: unknown) => {
        events.push(`error: ${(error as Error).message}`);
        return new Error(`wrapped: ${(error as Error).message}`);
      },
      onLeave: () => events.push("leave"),
    },
  };
}

describe("mapAsyncIterable", () => {
  it("maps every value and reports the end once", async () => {
    const { events, steps } = recorder();
    const seen: number[] = [];
    for await (const value of mapAsyncIterable(numbers(3), steps)) seen.push(value);
    expect(seen).toEqual([10, 20, 30]);
    expect(events).toEqual(["end"]);
  });

  it("gives the reader the error onError returns, then ends", async () => {
    const { events, steps } = recorder();
    const iterator = mapAsyncIterable(numbers(3, 2), steps)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: 10 });
    await expect(iterator.next()).rejects.toThrow("wrapped: failed at 2");
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(events).toEqual(["error: failed at 2"]);
  });

  it("treats an error thrown by map as the source's", async () => {
    const { events, steps } = recorder();
    const mapped = mapAsyncIterable(numbers(3), {
      ...steps,
      map: (n: number) => {
        if (n === 2) throw new Error("bad value");
        return n;
      },
    });
    await expect(async () => {
      for await (const _ of mapped);
    }).rejects.toThrow("wrapped: bad value");
    expect(events).toEqual(["error: bad value"]);
  });

  it("closes the source when the reader leaves early, and reports it", async () => {
    const { events, steps } = recorder();
    let closed = false;
    async function* source() {
      try {
        yield 1;
        yield 2;
      } finally {
        closed = true;
      }
    }
    for await (const value of mapAsyncIterable(source(), steps)) {
      expect(value).toBe(10);
      break;
    }
    expect(closed).toBe(true);
    expect(events).toEqual(["leave"]);
  });

  it("opens the source on the first read", async () => {
    let opened = 0;
    const source = {
      [Symbol.asyncIterator]() {
        opened += 1;
        return numbers(1);
      },
    };
    const mapped = mapAsyncIterable(source, { map: (n: number) => n });
    expect(opened).toBe(0);
    const iterator = mapped[Symbol.asyncIterator]();
    expect(opened).toBe(0);
    expect(await iterator.next()).toEqual({ done: false, value: 1 });
    expect(opened).toBe(1);
  });

  it("runs each read and the closing through `through`", async () => {
    const ran: string[] = [];
    let inside = false;
    async function* source() {
      try {
        ran.push(`read inside=${inside}`);
        yield 1;
        ran.push(`read inside=${inside}`);
        yield 2;
      } finally {
        ran.push(`close inside=${inside}`);
      }
    }
    const through = async <R>(step: () => Promise<R>): Promise<R> => {
      inside = true;
      try {
        return await step();
      } finally {
        inside = false;
      }
    };
    const iterator = mapAsyncIterable(source(), { map: (n: number) => n, through })[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: 1 });
    await iterator.return!();
    expect(ran).toEqual(["read inside=true", "close inside=true"]);
  });
});
