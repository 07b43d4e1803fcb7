import { join } from "node:path";
import { auth, type Bench, log, median, percentile, serviceEnv } from "../bench.js";
import { seed } from "../harness.js";
import type { Target } from "../workers/latency.js";
import type { Latencies } from "./webhooks.js";

export interface IdempotencyResult {
  creates: number;
  without: Latencies;
  with: Latencies;
}

/**
 * What an `Idempotency-Key` costs an agent create: creates with a new key each and creates without one,
 * alternating one at a time on the same all-in-one gateway.
 */
export async function idempotency(
  bench: Bench,
  providerEnv: Record<string, string>,
): Promise<IdempotencyResult> {
  const dataDir = join(bench.dir, "idempotency");
  const tenant = await seed(dataDir);
  const gateway = await bench.startGateway(
    "gateway-idempotency",
    { ...serviceEnv(dataDir), ...providerEnv },
    tenant,
  );
  const creates = bench.settings.messages;
  const create: Target = {
    url: `${gateway.url}/v1/agents`,
    headers: auth(tenant),
    body: JSON.stringify({
      name: "Created",
      bio: ["Made by the benchmark."],
      modelProvider: "openai",
      model: "bench-model",
    }),
    mode: "json",
  };
  log(`${creates} agent creates with an Idempotency-Key and without, alternating ...`);
  const [without, withKey] = await bench.latency(
    [create, { ...create, idempotencyKeys: true }],
    Math.ceil(creates / 10),
    creates,
  );
  await bench.stop([gateway.process]);
  const summary = (values: number[]) => ({ p50: median(values), p99: percentile(values, 99) });
  return { creates, without: summary(without!), with: summary(withKey!) };
}
