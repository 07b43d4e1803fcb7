import { join } from "node:path";
import { newId } from "@agentry/core";
import Database from "better-sqlite3";
import { auth, type Bench, log, median, percentile, serviceEnv } from "../bench.js";
import { type Seed, seed } from "../harness.js";
import type { Target } from "../workers/latency.js";
import type { Latencies } from "./webhooks.js";

/** The account sizes measured; the first is the one the others are compared with. */
export const ACCOUNT_SIZES = [100, 10_000, 100_000];

export interface AccountSizeRow {
  agents: number;
  /** Seconds the account took to grow to its size (bulk insert, outside the measurement). */
  growSeconds: number;
  create: Latencies;
  get: Latencies;
  listFirst: Latencies;
  /** `?page=500&limit=20`: the 9,981st to 10,000th agent, or an empty page in a smaller account. */
  listPage500: Latencies;
}

/**
 * Grows the tenant's account to `size` agents straight in the registry's SQLite file, in one transaction:
 * copies of the tenant's agent with ids and creation times of their own, spread over the past year so that every
 * list page holds distinct times. The store's triggers keep the account's counts exact, as they do for a create.
 */
function growAccount(dataDir: string, tenant: Seed, size: number): number {
  const db = new Database(join(dataDir, "registry.db"));
  try {
    const started = performance.now();
    const missing = size - tenant.agentIds.length;
    const insert = db.prepare(
      `INSERT INTO agents (id, account_id, name, bio, personality, knowledge, goals, clients, settings,
                           model_provider, model, plugins, status, status_reason, created_at, updated_at)
       SELECT @id, account_id, @name, bio, personality, knowledge, goals, clients, settings, model_provider, model,
              plugins, status, status_reason, @at, @at
         FROM agents WHERE id = @template`,
    );
    const yearAgo = Date.now() - 365 * 24 * 3600 * 1000;
    const step = (365 * 24 * 3600 * 1000) / Math.max(1, missing);
    db.transaction(() => {
      for (let i = 0; i < missing; i++) {
        const at = Math.floor(yearAgo + i * step);
        insert.run({
          id: newId("agent", at),
          name: `Agent ${i}`,
          at: new Date(at).toISOString(),
          template: tenant.agentId,
        });
      }
    })();
    return (performance.now() - started) / 1000;
  } finally {
    db.close();
  }
}

/**
 * What an account's size costs: create, get, the first list page and page 500 of an account of 100, 10,000 and
 * 100,000 agents, each size on an all-in-one server and data of its own, all twelve requests alternating one at
 * a time so that every size meets the same moments of a noisy machine.
 */
export async function accountSize(
  bench: Bench,
  providerEnv: Record<string, string>,
): Promise<AccountSizeRow[]> {
  const accounts = [];
  for (const size of ACCOUNT_SIZES) {
    const dataDir = join(bench.dir, `account-${size}`);
    const tenant = await seed(dataDir);
    const growSeconds = growAccount(dataDir, tenant, size);
    const env = { ...serviceEnv(dataDir), ...providerEnv };
    const gateway = await bench.startGateway(`gateway-account-${size}`, env, tenant);
    log(`account of ${size} agents grown in ${growSeconds.toFixed(1)} s`);
    accounts.push({ size, growSeconds, tenant, gateway });
  }
  const targets = accounts.flatMap(({ tenant, gateway }): Target[] => {
    const read = (path: string): Target => ({
      url: `${gateway.url}${path}`,
      method: "GET",
      headers: auth(tenant),
      mode: "json",
    });
    return [
      {
        url: `${gateway.url}/v1/agents`,
        headers: auth(tenant),
        body: JSON.stringify({
          name: "Created",
          bio: ["Made by the benchmark."],
          modelProvider: "openai",
          model: "bench-model",
        }),
        mode: "json",
      },
      read(`/v1/agents/${tenant.agentId}`),
      read("/v1/agents?limit=20"),
      read("/v1/agents?page=500&limit=20"),
    ];
  });
  const count = bench.settings.messages;
  log(`${count} each of create, get, list page 1 and list page 500 per account size, alternating ...`);
  const samples = await bench.latency(targets, Math.ceil(count / 10), count);
  await bench.stop(accounts.map(({ gateway }) => gateway.process));
  const summary = (values: number[]) => ({ p50: median(values), p99: percentile(values, 99) });
  return accounts.map(({ size, growSeconds }, i) => ({
    agents: size,
    growSeconds,
    create: summary(samples[i * 4]!),
    get: summary(samples[i * 4 + 1]!),
    listFirst: summary(samples[i * 4 + 2]!),
    listPage500: summary(samples[i * 4 + 3]!),
  }));
}
