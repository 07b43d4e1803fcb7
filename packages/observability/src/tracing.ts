import { commonJsExports } from "@agentry/core";
import {
  type Attributes,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";

export { SpanKind };

/** Set once tracing is on in this process; undefined means every helper here does nothing. */
let activeTracer: Tracer | undefined;

export interface Tracing {
  /** Whether spans are recorded and exported. */
  readonly enabled: boolean;
  /** Exports the spans still buffered and stops; call it when the process stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** `service.name` of the spans, unless OTEL_SERVICE_NAME says otherwise. */
  serviceName: string;
  /** Where the OTEL_* variables are read; the process environment by default. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Turns tracing on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: spans are
 * batched and exported over OTLP http/protobuf, and W3C `traceparent` headers carry the context between
 * services. The exporter reads the other standard variables itself (`OTEL_EXPORTER_OTLP_HEADERS`, timeouts);
 * `OTEL_BSP_SCHEDULE_DELAY` sets how often batches leave (5 s by default).
 *
 * Unset, nothing is loaded and nothing is wrapped: the SDK is imported only when tracing is on, so a process
 * without it pays neither start-up time nor per-request cost.
 */

export async function initTracing(options: TracingOptions): Promise<Tracing> {
  const env = options.env ?? process.env;
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
    (env.OTEL_EXPORTER_OTLP_ENDPOINT && `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`);
  if (!url) return { enabled: false, shutdown: async () => {} };
  const [sdk, hooks, core, resources, exporter] = await Promise.all([
    import("@opentelemetry/sdk-trace-base").then(commonJsExports),
    import("@opentelemetry/context-async-hooks").then(commonJsExports),
    import("@opentelemetry/core").then(commonJsExports),
    import("@opentelemetry/resources").then(commonJsExports),
    import("@opentelemetry/exporter-trace-otlp-proto").then(commonJsExports),
  ]);
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({
      "service.name": env.OTEL_SERVICE_NAME || options.serviceName,
    }),
    spanProcessors: [
      new sdk.BatchSpanProcessor(new exporter.OTLPTraceExporter({ url }), {
        ...(Number.isFinite(delay) && delay >= 0 ? { scheduledDelayMillis: delay } : {}),
      }),
    ],
  });
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  activeTracer = trace.getTracer("agentry");
  return {
    enabled: true,
    shutdown: async () => {
      activeTracer = undefined;
      await provider.shutdown();
    },
  };
}

/** The tracer when tracing is on; callers skip all span work when it is undefined. */
export function tracer(): Tracer | undefined {
  return activeTracer;
}

/** Marks the span failed with the error's name and message (never its cause, which may hold secrets). */
export function failSpan(span: Span, error: unknown): void {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute("error.type", (error as { code?: unknown })?.code?.toString() ?? name);
}

/** Runs fn inside a new span (a child of the active one) and ends it when fn settles. */
export async function inSpan<T>(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const t = activeTracer;
  if (!t) return fn(undefined);
  const span = t.startSpan(name, { kind, attributes });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => fn(span));
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Wraps every method of `target` so that a call made while a traced request is in progress gets a span
 * `${prefix}.${method}`, ended when its promise settles. Calls outside any trace (background work such as the
 * outbox relay's polling) get none, so they do not flood the traces. Returns `target` itself when tracing is off.
 */
export function traceMethods<T extends object>(target: T, prefix: string, attributes: Attributes = {}): T {
  if (!activeTracer) return target;
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== "function" || typeof property === "symbol" || property === "constructor") {
        return value;
      }
      let wrapper = wrapped.get(property);
      if (wrapper === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        const name = `${prefix}.${property}`;
        wrapper = function traced(this: unknown, ...args: unknown[]): unknown {
          const t = activeTracer;
          const self = this === receiver ? object : this;
          if (!t || trace.getSpan(context.active()) === undefined) return method.apply(self, args);
          const span = t.startSpan(name, { kind: SpanKind.INTERNAL, attributes });
          let result: unknown;
          try {
            result = context.with(trace.setSpan(context.active(), span), () => method.apply(self, args));
          } catch (error) {
            failSpan(span, error);
            span.end();
            throw error;
          }
          if (result instanceof Promise) {
            return result.then(
              (resolved) => {
                span.end();
                return resolved;
              },
              (error: unknown) => {
                failSpan(span, error);
                span.end();
                throw error;
              },
            );
          }
          span.end();
          return result;
        };
        wrapped.set(property, wrapper);
      }
      return wrapper;
    },
  });
}
