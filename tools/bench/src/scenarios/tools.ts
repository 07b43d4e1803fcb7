import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Bench, log, median, percentile } from "../bench.js";
import { runWorker } from "../harness.js";

export interface ToolTurnResult {
  count: number;
  plain: { p50: number; p99: number };
  withTool: { p50: number; p99: number };
  providerRoundTrip: { p50: number; p99: number };
}

/**
 * What a local tool call adds to a turn beyond the provider round trip it needs (workers/tools.ts): a turn with
 * one tool call makes two provider calls where a plain turn makes one, so the tool's cost is the tool turn less
 * the plain turn less one provider round trip, all measured in the same run.
 */
export async function toolTurns(bench: Bench): Promise<ToolTurnResult> {
  const dir = join(bench.dir, "tools");
  await mkdir(dir, { recursive: true });
  const count = bench.settings.messages;
  log(
    `${count} plain turns, ${count} turns with a tool call and ${count} provider round trips, alternating ...`,
  );
  const { samples } = await runWorker<{ samples: number[][] }>("tools", {
    dir,
    warmup: Math.max(10, Math.ceil(count / 10)),
    count,
  });
  const summary = (values: number[]) => ({ p50: median(values), p99: percentile(values, 99) });
  return {
    count,
    plain: summary(samples[0]!),
    withTool: summary(samples[1]!),
    providerRoundTrip: summary(samples[2]!),
  };
}
