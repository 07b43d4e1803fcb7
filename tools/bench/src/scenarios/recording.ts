import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Bench, log, median, percentile } from "../bench.js";
import { runWorker } from "../harness.js";

export interface RecordingResult {
  count: number;
  withUsage: { p50: number; p99: number };
  withoutUsage: { p50: number; p99: number };
}

/**
 * What recording usage adds to a message's round trip: storing its exchange (workers/recording.ts) with the
 * rollup and without it, in the same run. The rollup is written inside that transaction and nowhere else on the
 * message's path, so the difference is what it adds to the round trip.
 */
export async function usageRecording(bench: Bench): Promise<RecordingResult> {
  const dirs = [join(bench.dir, "recording-with"), join(bench.dir, "recording-without")];
  for (const dir of dirs) await mkdir(dir, { recursive: true });
  const count = bench.settings.recordings;
  log(`storing ${count} exchanges with usage and ${count} without, alternating ...`);
  const { samples } = await runWorker<{ samples: number[][] }>("recording", {
    dirs,
    warmup: Math.ceil(count / 10),
    count,
  });
  const summary = (values: number[]) => ({ p50: median(values), p99: percentile(values, 99) });
  return { count, withUsage: summary(samples[0]!), withoutUsage: summary(samples[1]!) };
}
