import { Code } from "@connectrpc/connect";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Seconds; from sub-millisecond reads to slow model replies. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds; model calls are slow, their interesting range starts around a tenth of a second. */
const PROVIDER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];

/** Which side of an RPC a process saw: it called (`client`) or it served (`server`). */
export type RpcSide = "client" | "server";

/** What a stream is: a public SSE response of the gateway, or a streamed RPC served by a service. */
export type StreamKind = "sse" | "rpc";

/**
 * The Prometheus metrics of one process: one registry, shared by whatever runs in it (the all-in-one gateway
 * embeds the registry and conversation services, and their metrics land in the same scrape). Every metric is
 * named `agentry_*`; Node's own (`process_*`, `nodejs_*`) come with it.
 *
 * Label values come from fixed sets (route patterns, method names, codes, limit and provider names), never from
 * raw paths, ids or callers, so the number of series stays bounded.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<"method" | "route" | "status">;
  private readonly httpDuration: Histogram<"method" | "route" | "status">;
  private readonly limiterDecisions: Counter<"limit" | "decision">;
  private readonly rpcCalls: Counter<"side" | "service" | "method" | "code">;
  private readonly rpcDuration: Histogram<"side" | "service" | "method">;
  private readonly providerDuration: Histogram<"provider" | "outcome">;
  private readonly providerFirstToken: Histogram<"provider">;
  private readonly providerTokens: Counter<"provider" | "direction">;
  private readonly providerErrors: Counter<"provider" | "code">;
  private readonly openStreams: Gauge<"kind">;

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: "agentry_http_requests_total",
      help: "HTTP requests answered, by method, route pattern and status.",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.httpDuration = new Histogram({
      name: "agentry_http_request_duration_seconds",
      help: "Time from receiving an HTTP request to the end of its response (a stream's whole life).",
      labelNames: ["method", "route", "status"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.limiterDecisions = new Counter({
      name: "agentry_limiter_decisions_total",
      help: "Rate and concurrency limit decisions, by limit name and decision (allowed or refused).",
      labelNames: ["limit", "decision"],
      registers,
    });
    this.rpcCalls = new Counter({
      name: "agentry_rpc_calls_total",
      help: "RPCs finished, by side (client or server), service, method and Connect code (ok on success).",
      labelNames: ["side", "service", "method", "code"],
      registers,
    });
    this.rpcDuration = new Histogram({
      name: "agentry_rpc_duration_seconds",
      help: "RPC duration by side, service and method; a streamed call lasts until its stream ends.",
      labelNames: ["side", "service", "method"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.providerDuration = new Histogram({
      name: "agentry_provider_request_duration_seconds",
      help: "Model provider calls from request to complete reply, by provider and outcome (ok or error).",
      labelNames: ["provider", "outcome"],
      buckets: PROVIDER_BUCKETS,
      registers,
    });
    this.providerFirstToken = new Histogram({
      name: "agentry_provider_first_token_seconds",
      help: "Streamed model provider calls: time to the first text of the reply.",
      labelNames: ["provider"],
      buckets: PROVIDER_BUCKETS,
      registers,
    });
    this.providerTokens = new Counter({
      name: "agentry_provider_tokens_total",
      help: "Tokens the model providers reported, by provider and direction (input or output).",
      labelNames: ["provider", "direction"],
      registers,
    });
    this.providerErrors = new Counter({
      name: "agentry_provider_errors_total",
      help: "Failed model provider calls, by provider and public error code.",
      labelNames: ["provider", "code"],
      registers,
    });
    this.openStreams = new Gauge({
      name: "agentry_open_streams",
      help: "Streams open now: public SSE responses (sse) and streamed RPCs being served (rpc).",
      labelNames: ["kind"],
      registers,
    });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** One answered HTTP request; `route` is the route pattern (`/v1/agents/:agentId`), never the raw path. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  limiterDecision(limit: string, allowed: boolean): void {
    this.limiterDecisions.inc({ limit, decision: allowed ? "allowed" : "refused" });
  }

  /** One finished RPC; `code` is `ok` or a Connect code name such as `not_found`. */
  observeRpc(side: RpcSide, service: string, method: string, code: string, seconds: number): void {
    this.rpcCalls.inc({ side, service, method, code });
    this.rpcDuration.observe({ side, service, method }, seconds);
  }

  observeProviderCall(provider: string, outcome: "ok" | "error", seconds: number): void {
    this.providerDuration.observe({ provider, outcome }, seconds);
  }

  observeFirstToken(provider: string, seconds: number): void {
    this.providerFirstToken.observe({ provider }, seconds);
  }

  countTokens(provider: string, input: number, output: number): void {
    if (input > 0) this.providerTokens.inc({ provider, direction: "input" }, input);
    if (output > 0) this.providerTokens.inc({ provider, direction: "output" }, output);
  }

  countProviderError(provider: string, code: string): void {
    this.providerErrors.inc({ provider, code });
  }

  /** Counts a stream as open; the returned function closes it (calling it again does nothing). */
  streamOpened(kind: StreamKind): () => void {
    this.openStreams.inc({ kind });
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.openStreams.dec({ kind });
    };
  }

  /** The text exposition format, for `GET /metrics`. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** A Connect code as the Connect protocol spells it (`not_found`); `ok` for success. */
export function codeName(code: Code | undefined): string {
  if (code === undefined) return "ok";
  const name = Code[code];
  return name === undefined
    ? "unknown"
    : name.replace(/[A-Z]/g, (c, i) => (i === 0 ? "" : "_") + c.toLowerCase());
}
