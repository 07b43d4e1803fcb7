import { join } from "node:path";
import { auth, type Bench, type LoadResult, log, serviceEnv } from "../bench.js";
import { seed } from "../harness.js";

export interface CreatesResult {
  connections: number;
  load: LoadResult;
}

/** Connections creating at once: enough to keep a durable store's commits queued. */
const CONNECTIONS = 16;

/**
 * Durable agent creates under load: the all-in-one server on its SQLite file (`synchronous = FULL`, so each 201
 * follows a commit on disk), `POST /v1/agents` from 16 connections, each create a new agent.
 */
export async function creates(bench: Bench, providerEnv: Record<string, string>): Promise<CreatesResult> {
  const dataDir = join(bench.dir, "creates");
  const tenant = await seed(dataDir);
  const gateway = await bench.startGateway(
    "gateway-creates",
    { ...serviceEnv(dataDir), ...providerEnv },
    tenant,
  );
  log(`agent creates from ${CONNECTIONS} connections ...`);
  const body = JSON.stringify({
    name: "Created [<id>]",
    bio: ["Made by the benchmark."],
    modelProvider: "openai",
    model: "bench-model",
  });
  const load = await bench.load(`${gateway.url}/v1/agents`, auth(tenant), [gateway.process], {
    body,
    connections: CONNECTIONS,
  });
  await bench.stop([gateway.process]);
  return { connections: CONNECTIONS, load };
}
