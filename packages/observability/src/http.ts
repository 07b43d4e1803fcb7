import { context, propagation, type Span, trace } from "@opentelemetry/api";
import type { Metrics } from "./metrics.js";
import { failSpan, SpanKind, tracer } from "./tracing.js";

/** One HTTP request being observed: run its handling inside `run`, then `end` it once its response is done. */
export interface HttpObservation {
  run(handle: () => Promise<void>): Promise<void>;
  /** `route` is the matched route pattern, never the raw path. */
  end(route: string, status: number, requestId?: string): void;
}

const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const value = carrier[key];
    return typeof value === "string" ? value : undefined;
  },
};

const untraced = (handle: () => Promise<void>) => handle();

/**
 * Starts observing an HTTP request: its duration and status go to `metrics`, and when tracing is on it runs in a
 * server span that the RPCs it makes continue. A `traceparent` the caller sent is honoured, so a client's own
 * trace can include the request.
 */
export function observeHttpRequest(
  metrics: Metrics | undefined,
  method: string,
  headers: Record<string, unknown>,
): HttpObservation {
  const started = performance.now();
  const t = tracer();
  let span: Span | undefined;
  let run = untraced;
  if (t) {
    const parent = propagation.extract(context.active(), headers, headerGetter);
    const traced = t.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": method } },
      parent,
    );
    const spanContext = trace.setSpan(parent, traced);
    span = traced;
    run = (handle) => context.with(spanContext, handle);
  }
  return {
    run,
    end(route, status, requestId) {
      metrics?.observeHttp(method, route, status, (performance.now() - started) / 1000);
      if (!span) return;
      span.updateName(`${method} ${route}`);
      span.setAttributes({ "http.route": route, "http.response.status_code": status });
      if (requestId) span.setAttribute("agentry.request_id", requestId);
      if (status >= 500) failSpan(span, new Error(`HTTP ${status}`));
      span.end();
    },
  };
}
