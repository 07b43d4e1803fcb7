import { describe, expect, it, vi } from "vitest";
import { removeInBatches, repeatEvery } from "./periodic.js";

describe("repeatEvery", () => {
  it("runs every interval, never two runs at a time, and stop waits for a run under way", async () => {
    vi.useFakeTimers();
    try {
      let runs = 0;
      let release: () => void = () => undefined;
      const repetition = repeatEvery(100, () => {
        runs += 1;
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      expect(runs).toBe(0);
      await vi.advanceTimersByTimeAsync(100);
      expect(runs).toBe(1);
      await vi.advanceTimersByTimeAsync(350);
      // The ticks while it ran were skipped.
      expect(runs).toBe(1);
      release();
      await vi.advanceTimersByTimeAsync(100);
      expect(runs).toBe(2);
      let stopped = false;
      const stopping = repetition.stop().then(() => {
        stopped = true;
      });
      await vi.advanceTimersByTimeAsync(0);
      expect(stopped).toBe(false);
      release();
      await stopping;
      await vi.advanceTimersByTimeAsync(1000);
      expect(runs).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("removeInBatches", () => {
  it("asks again while whole batches are removed", async () => {
    const left = [3, 3, 1];
    const asked: number[] = [];
    const total = await removeInBatches(async (limit) => {
      asked.push(limit);
      return left.shift() ?? 0;
    }, 3);
    expect(total).toBe(7);
    expect(asked).toEqual([3, 3, 3]);
  });
});
