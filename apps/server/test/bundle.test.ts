import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startTestRedis, type TestRedis } from "@agentry/limits/testing";
import { OtlpCollector } from "@agentry/observability/testing";
import { type DeployableProcess as ServiceProcess, startDeployable } from "@agentry/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/**
 * The bundle `pnpm build` makes is what `pnpm start` and the image run: built here and started as a process, with
 * the parts that load code on demand switched on (the tracing SDK).
 */
describe("the bundled server", () => {
  let dataDir: string;
  let collector: OtlpCollector;
  let gateway: ServiceProcess;
  let redis: TestRedis;

  beforeAll(async () => {
    const build = spawn(
      process.execPath,
      [join(root, "scripts", "bundle.mjs"), join(root, "apps", "server")],
      {
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    const [code] = (await once(build, "exit")) as [number | null];
    expect(code).toBe(0);
    dataDir = await mkdtemp(join(tmpdir(), "agentry-bundle-"));
    collector = await new OtlpCollector().start();
    redis = await startTestRedis();
    gateway = await startDeployable(
      "apps/server",
      {
        PORT: "0",
        DATA_DIR: dataDir,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_BSP_SCHEDULE_DELAY: "50",
        // The limiter loads its Redis client on demand, from a chunk of the bundle of its own.
        REDIS_URL: redis.url,
      },
      { bundle: true },
    );
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await collector?.close();
    await redis?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("serves requests and exports their traces", async () => {
    const response = await fetch(`${gateway.url}/v1/agents`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
    const span = await collector.waitFor(
      (candidate) => candidate.service === "agentry-gateway" && candidate.name === "GET /v1/agents",
    );
    expect(span.attributes["http.response.status_code"]).toBe(401);
  });

  it("reaches Redis with the client it loads on demand from its own chunk", async () => {
    const redisReady = async () =>
      ((await (await fetch(`${gateway.url}/readyz`)).json()) as { dependencies: { redis?: string } })
        .dependencies.redis;
    let ready = await redisReady();
    for (const started = Date.now(); ready !== "up" && Date.now() - started < 10_000; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ready = await redisReady();
    }
    expect(ready).toBe("up");
  });

  it("stops cleanly on SIGTERM", async () => {
    expect(await gateway.stop("SIGTERM")).toBe(0);
  });
});
