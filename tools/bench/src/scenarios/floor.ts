import { createWriteStream } from "node:fs";
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { join } from "node:path";
import { generateApiKey } from "@agentry/core";
import {
  Authenticator,
  accessLogger,
  allowedMethods,
  type GatewayContext,
  type GatewayState,
  limitsMiddleware,
  ROUTES,
  requestFrame,
  requestIdOf,
  requestTemplate,
  routesOf,
  writeAccessLogOnClose,
} from "@agentry/gateway";
import { createMemoryLimiter } from "@agentry/limits";
import { createLogger, withRequestScope } from "@agentry/logging";
import { Metrics, observeHttpRequest } from "@agentry/observability";
import { AccountSchema, type AccountService, ApiKeySchema, Tier } from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { Router } from "@koa/router";
import Koa, { type Middleware } from "koa";
import { type Bench, log, median } from "../bench.js";

/** The route every floor app serves, shaped like an agent read so that the router matches a parameter. */
const ROUTE = "/v1/agents/:agentId";
const PATH = "/v1/agents/agent_floor";

/** The gateway's per-request layers, in the order a request meets them (docs/benchmarks.md, "The per-request floor"). */
export const FLOOR_LAYERS = [
  "request-id",
  "access-log",
  "metrics",
  "envelope",
  "router",
  "key-check",
  "limits",
] as const;

export type FloorLayer = (typeof FLOOR_LAYERS)[number];

/** What each layer says in the report. */
export const FLOOR_LABELS: Record<FloorLayer | "koa", string> = {
  koa: "Bare Koa answering an agent-sized body from memory",
  "request-id": "Request id (`X-Request-Id`) and the log scope",
  "access-log": "Access log line (JSON at `info`, to a file)",
  metrics: "Metrics (request counter and duration histogram)",
  envelope: "Error envelope and unmatched routes (now the whole `requestFrame`)",
  router: "Router (the gateway's routes, the request's template checked as `serveRoute` does)",
  "key-check": "Key check (the principal kept by the `Authorization` value)",
  limits: "Limits (tier and endpoint buckets taken, `X-RateLimit-*` headers)",
};

export interface FloorResult {
  /** Requests timed per app and round. */
  requests: number;
  /** Each round: CPU microseconds per request of the app with the first n layers, n = 0 (bare Koa) to all. */
  rounds: number[][];
}

/**
 * A Koa app with the first `count` layers of FLOOR_LAYERS in front of its answer, each the gateway's own code: the
 * frame's parts in the frame's order (then `requestFrame` itself), the router, the `Authenticator` against a
 * registry that answers at once, `limitsMiddleware` on the in-memory limiter.
 */
function floorApp(count: number, logFile: string) {
  const layers = new Set(FLOOR_LAYERS.slice(0, count));
  const body = JSON.stringify({ success: true, data: { id: "agent_floor", name: "x".repeat(600) } });
  const logger = createLogger({
    service: "gateway",
    format: "json",
    destination: createWriteStream(logFile),
  });
  const metrics = layers.has("metrics") ? new Metrics() : undefined;
  const gateway = { logger, metrics } as unknown as GatewayContext;
  const accessLog = accessLogger(logger);
  const accounts = {
    async verifyApiKey() {
      return {
        apiKey: create(ApiKeySchema, { id: "key_floor", fullAccess: true }),
        account: create(AccountSchema, {
          id: "acct_floor",
          tier: Tier.STANDARD,
          limits: { requestsPerMinute: 1_000_000_000, getPerMinute: 1_000_000_000 },
        }),
      };
    },
  } as unknown as Client<typeof AccountService>;
  const authenticator = new Authenticator(accounts, 3_600_000);
  const limiter = createMemoryLimiter();
  const route = { method: "GET", path: ROUTE, scope: "agents:read", limit: "getPerMinute" } as const;
  const limits = limitsMiddleware({ limiter, logger, leaseMs: 30_000 })(route as never);

  const app = new Koa<GatewayState>();
  app.silent = true;
  if (layers.has("envelope")) {
    app.use(requestFrame(gateway));
  } else if (layers.has("request-id")) {
    app.use((ctx, next) => {
      const requestId = requestIdOf(ctx.get("x-request-id"));
      ctx.state.requestId = requestId;
      ctx.set("X-Request-Id", requestId);
      return withRequestScope({ requestId }, async () => {
        if (layers.has("access-log")) writeAccessLogOnClose(accessLog, ctx, requestId);
        const observation = metrics ? observeHttpRequest(metrics, ctx.method, ctx.headers) : undefined;
        try {
          await (observation ? observation.run(next) : next());
        } finally {
          observation?.end(ROUTE, ctx.status, requestId);
        }
      });
    });
  }
  const answer: Middleware<GatewayState> = async (ctx) => {
    if (layers.has("key-check")) {
      ctx.state.principal = await authenticator.authenticate(ctx.get("authorization"), {});
    }
    const respond = async () => {
      ctx.type = "application/json";
      ctx.body = body;
    };
    return layers.has("limits") ? limits(ctx, respond) : respond();
  };
  if (layers.has("router")) {
    // Every declared operation, dispatched as `buildApp` does; each route's chain first checks that the request's
    // template is its own, as `serveRoute` does.
    const router = new Router<GatewayState>();
    for (const declared of ROUTES) {
      const serve: Middleware<GatewayState> =
        declared.method === "GET" && declared.path === ROUTE
          ? answer
          : async () => {
              throw new Error(`the floor serves only GET ${ROUTE}, not ${declared.method} ${declared.path}`);
            };
      router.register(
        declared.path,
        [declared.method],
        [(ctx, next) => (requestTemplate(ctx) === declared.path ? serve(ctx, next) : next())],
      );
    }
    app.use(routesOf(router));
    app.use(allowedMethods(router));
  } else {
    app.use(answer);
  }
  return { handler: app.callback(), close: () => limiter.close() };
}

/** Sends `count` requests through `handler` one after another, without a socket: what is left is the app's work. */
async function drive(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  headers: Record<string, string>,
  count: number,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    const req = new IncomingMessage(new Socket());
    req.method = "GET";
    req.url = PATH;
    req.headers = { ...headers };
    const res = new ServerResponse(req);
    await handler(req, res);
    if (res.statusCode !== 200) throw new Error(`the floor answered ${res.statusCode}`);
    // The response has gone: what the access log waits for.
    res.emit("close");
  }
}

/**
 * The per-request floor, layer by layer, in the benchmark's process: an app per prefix of FLOOR_LAYERS, each
 * given the same requests in turn in every round (the order turned each round), CPU time per request; the first
 * is bare Koa. Without sockets or HTTP parsing (the same for every app), a layer's cost is what it adds.
 */
export async function floor(bench: Bench): Promise<FloorResult> {
  const { secret } = generateApiKey();
  const headers = { host: "127.0.0.1", authorization: `Bearer ${secret}`, accept: "application/json" };
  const apps = Array.from({ length: FLOOR_LAYERS.length + 1 }, (_, count) =>
    floorApp(count, join(bench.dir, `floor-${count}.log`)),
  );
  const requests = 20_000;
  const roundCount = Math.max(5, bench.settings.rounds);
  for (const app of apps) await drive(app.handler, headers, 2000);
  const rounds: number[][] = [];
  for (let round = 0; round < roundCount; round++) {
    log(`round ${round + 1}: ${requests} requests through each of ${apps.length} floor apps ...`);
    const cpu = new Array<number>(apps.length).fill(0);
    for (let k = 0; k < apps.length; k++) {
      const index = (k + round) % apps.length;
      const before = process.cpuUsage();
      await drive(apps[index]!.handler, headers, requests);
      const used = process.cpuUsage(before);
      cpu[index] = (used.user + used.system) / requests;
    }
    rounds.push(cpu);
  }
  for (const app of apps) await app.close();
  const summary = rounds[0]!.map((_, i) => median(rounds.map((r) => r[i]!)).toFixed(1)).join(", ");
  log(`floor, µs CPU per request by layers: ${summary}`);
  return { requests, rounds };
}
