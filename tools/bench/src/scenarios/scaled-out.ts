import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { startTestRedis } from "@agentry/limits/testing";
import { startTestPostgres } from "@agentry/testing-pg";
import { auth, type Bench, type LoadResult, log, serviceEnv } from "../bench.js";
import {
  cpuSecondsOfAll,
  findProcesses,
  freePort,
  processTree,
  ROOT,
  type Running,
  runWorker,
  seed,
  waitUntilOk,
} from "../harness.js";

/** One request under load on both gateways at once. */
export interface ScaledOutRow {
  name: "get" | "list" | "create" | "message";
  /** Per gateway, in order. */
  gateways: Omit<LoadResult, "cpuMicros">[];
  /** Requests per second of both together. */
  totalPerSecond: number;
  /** CPU time per request answered, in microseconds, of each part of the system. */
  cpuMicros: Record<string, number>;
}

export interface ScaledOutResult {
  connectionsPerGateway: number;
  rows: ScaledOutRow[];
}

/**
 * The scaled-out system as the README's "Running in production" runs it, on loopback: a Postgres server and a
 * Redis server of the run's own, the registry, the conversation service, the webhooks service and two gateways,
 * each its own process from its bundle. Each request is loaded on both gateways at once (autocannon, one process
 * per gateway), and the CPU time of every process (Postgres with its backends) is divided by the requests answered.
 */
export async function scaledOut(bench: Bench, providerEnv: Record<string, string>): Promise<ScaledOutResult> {
  const dataDir = join(bench.dir, "scaled-out");
  const [postgres, redis] = await Promise.all([startTestPostgres(), startTestRedis()]);
  try {
    const port = async () => String(await freePort());
    const [registryPort, conversationPort, webhooksPort] = await Promise.all([port(), port(), port()]);
    const metricsPorts = await Promise.all([port(), port(), port(), port(), port()]);
    const urls = {
      REGISTRY_URL: `http://127.0.0.1:${registryPort}`,
      CONVERSATION_URL: `http://127.0.0.1:${conversationPort}`,
      WEBHOOKS_URL: `http://127.0.0.1:${webhooksPort}`,
    };
    // The tenant is written first: opening the store brings the schema up to date before any service starts.
    const tenant = await seed(dataDir, postgres.url);
    const common = { ...serviceEnv(dataDir), DATABASE_URL: postgres.url };
    const service = (name: string, env: Record<string, string>) =>
      bench.launch(`scaled-${name}`, "node", [join(ROOT, "services", name, "dist", "main.mjs")], {
        ...common,
        METRICS_PORT: metricsPorts.shift()!,
        ...env,
      });
    const registry = service("registry", {
      REGISTRY_PORT: registryPort,
      ...urls,
      SECRETS_KEY: randomBytes(32).toString("base64"),
    });
    const conversation = service("conversation", {
      ...providerEnv,
      CONVERSATION_PORT: conversationPort,
      WEBHOOKS_URL: urls.WEBHOOKS_URL,
      REGISTRY_URL: urls.REGISTRY_URL,
    });
    const webhooks = service("webhooks", { WEBHOOKS_PORT: webhooksPort });
    const gateways: { process: Running; url: string }[] = [];
    for (const n of [1, 2]) {
      const gatewayPort = await port();
      const process = service(`gateway`, { ...urls, PORT: gatewayPort, REDIS_URL: redis.url });
      const url = `http://127.0.0.1:${gatewayPort}`;
      await waitUntilOk(`${url}/v1/agents/${tenant.agentId}`, process, { headers: auth(tenant) });
      log(`scaled out: gateway ${n} ready`);
      gateways.push({ process, url });
    }

    const postmaster = await findProcesses((line) => line.includes(`-p ${new URL(postgres.url).port} `));
    const redisServer = await findProcesses((line) =>
      line.startsWith(`redis-server 127.0.0.1:${redis.port}`),
    );
    const parts: Record<string, () => Promise<number[]>> = {
      "gateway 1": async () => [gateways[0]!.process.pid],
      "gateway 2": async () => [gateways[1]!.process.pid],
      registry: async () => [registry.pid],
      conversation: async () => [conversation.pid],
      webhooks: async () => [webhooks.pid],
      // Backends come and go with the pools: the tree is read again at each reading.
      postgres: async () => (await Promise.all(postmaster.map(processTree))).flat(),
      redis: async () => redisServer,
    };
    const readCpu = async () => {
      const each: Record<string, number> = {};
      for (const [name, pids] of Object.entries(parts)) each[name] = await cpuSecondsOfAll(await pids());
      return each;
    };

    const requests: { name: ScaledOutRow["name"]; path: string; body?: string }[] = [
      { name: "get", path: `/v1/agents/${tenant.agentId}` },
      { name: "list", path: "/v1/agents" },
      {
        name: "create",
        path: "/v1/agents",
        body: JSON.stringify({ name: "Created [<id>]", modelProvider: "openai", model: "bench-model" }),
      },
      {
        name: "message",
        path: `/v1/agents/${tenant.agentId}/messages`,
        body: JSON.stringify({ text: "Hello there", userId: "user-[<id>]" }),
      },
    ];
    const rows: ScaledOutRow[] = [];
    for (const request of requests) {
      log(`scaled out: ${request.name} on both gateways at once ...`);
      const before = await readCpu();
      const results = await Promise.all(
        gateways.map(({ url }) =>
          runWorker<Omit<LoadResult, "cpuMicros">>("load", {
            url: `${url}${request.path}`,
            ...(request.body ? { method: "POST", body: request.body } : {}),
            headers: auth(tenant),
            connections: bench.settings.connections,
            seconds: bench.settings.seconds,
            warmupSeconds: 2,
          }),
        ),
      );
      const after = await readCpu();
      const failed = results.reduce((sum, r) => sum + r.non2xx + r.errors, 0);
      if (failed > 0) throw new Error(`scaled out ${request.name}: ${failed} failed answers under load`);
      const answered = results.reduce((sum, r) => sum + r.answered, 0);
      rows.push({
        name: request.name,
        gateways: results,
        totalPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
        // A gateway's CPU is divided by what it answered, every other part's by what both answered.
        cpuMicros: Object.fromEntries(
          Object.keys(parts).map((name) => {
            const gateway = /^gateway (\d)$/.exec(name);
            const count = gateway ? results[Number(gateway[1]) - 1]!.answered : answered;
            return [name, ((after[name]! - before[name]!) * 1e6) / count];
          }),
        ),
      });
    }
    await bench.stop([...gateways.map((g) => g.process), registry, conversation, webhooks]);
    return { connectionsPerGateway: bench.settings.connections, rows };
  } finally {
    await redis.stop();
    await postgres.destroy();
  }
}
