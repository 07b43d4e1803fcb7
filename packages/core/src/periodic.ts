/** A task run every so often; `stop` ends the repetition and waits for a run under way. */
export interface Repetition {
  stop(): Promise<void>;
}

/**
 * Runs `task` every `intervalMs`, never two runs at a time: a tick that comes while one runs is skipped. The timer
 * does not keep the process alive. The task handles its own failures.
 */
export function repeatEvery(intervalMs: number, task: () => Promise<void>): Repetition {
  let running: Promise<void> | null = null;
  const tick = () => {
    running ??= task().finally(() => {
      running = null;
    });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** Calls `remove` with `batch` until it removes fewer than that; how many it removed in all. */
export async function removeInBatches(
  remove: (limit: number) => Promise<number>,
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await remove(batch);
    total += removed;
    if (removed < batch) return total;
  }
}
