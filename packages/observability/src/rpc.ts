import { mapAsyncIterable, newId } from "@agentry/core";
import { currentRequestId, withRequestScope } from "@agentry/logging";
import { ConnectError, type Interceptor, type StreamResponse } from "@connectrpc/connect";
import { type Context, context, propagation, SpanKind, trace } from "@opentelemetry/api";
import { codeName, type Metrics, type RpcSide } from "./metrics.js";
import { failSpan, tracer } from "./tracing.js";

/** The header that carries the id of the public request an RPC serves. */
export const REQUEST_ID_HEADER = "x-request-id";

// Anything else (too long, odd characters) is not trusted into the logs; the call gets an id of its own.
const ACCEPTABLE_ID = /^[\w.:-]{1,128}$/;

/**
 * Runs each served call inside the request scope of the id its caller sent, so every log line written while
 * serving it (a streamed reply included, which runs after the handler returned) names the public request.
 */
export const requestScopeInterceptor: Interceptor = (next) => async (request) => {
  const sent = request.header.get(REQUEST_ID_HEADER);
  // A call made in process while serving that same request is in its scope already.
  if (sent && sent === currentRequestId()) return next(request);
  const scope = { requestId: sent && ACCEPTABLE_ID.test(sent) ? sent : newId("request") };
  const response = await withRequestScope(scope, () => next(request));
  if (!response.stream) return response;
  return { ...response, message: iterateIn(response.message, (step) => withRequestScope(scope, step)) };
};

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};
const headerSetter = { set: (carrier: Headers, key: string, value: string) => carrier.set(key, value) };

/**
 * The interceptors that observe RPCs on one side: calls by method and code with their duration (when `metrics`
 * is given), a span per call with the trace context carried in the headers (when tracing is on), and for the
 * server side the streams being served. Empty when neither is on, so an unobserved process pays nothing.
 */
export function rpcInterceptors(side: RpcSide, metrics: Metrics | undefined): Interceptor[] {
  if (!metrics && !tracer()) return [];
  const interceptor: Interceptor = (next) => async (request) => {
    const service = shortServiceName(request.service.typeName);
    const method = request.method.name;
    const started = performance.now();
    const t = tracer();
    let callContext: Context | undefined;
    let span: ReturnType<NonNullable<typeof t>["startSpan"]> | undefined;
    if (t) {
      const parent =
        side === "server"
          ? propagation.extract(context.active(), request.header, headerGetter)
          : context.active();
      span = t.startSpan(
        `${request.service.typeName}/${method}`,
        {
          kind: side === "server" ? SpanKind.SERVER : SpanKind.CLIENT,
          attributes: {
            "rpc.system": "connect_rpc",
            "rpc.service": request.service.typeName,
            "rpc.method": method,
          },
        },
        parent,
      );
      callContext = trace.setSpan(parent, span);
      if (side === "client") propagation.inject(callContext, request.header, headerSetter);
    }
    const finish = (error: unknown, cancelled = false) => {
      const code = cancelled
        ? "canceled"
        : error === undefined
          ? "ok"
          : codeName(ConnectError.from(error).code);
      metrics?.observeRpc(side, service, method, code, (performance.now() - started) / 1000);
      if (span) {
        span.setAttribute("rpc.connect_rpc.error_code", code);
        if (error !== undefined) failSpan(span, error);
        span.end();
      }
    };

    let response: Awaited<ReturnType<typeof next>>;
    try {
      response = callContext ? await context.with(callContext, () => next(request)) : await next(request);
    } catch (error) {
      finish(error);
      throw error;
    }
    if (!response.stream) {
      finish(undefined);
      return response;
    }
    const closeStream = side === "server" ? metrics?.streamOpened("rpc") : undefined;
    const run = callContext
      ? <R>(step: () => Promise<R>) => context.with(callContext, step)
      : <R>(step: () => Promise<R>) => step();
    const message = iterateIn(response.message, run, (error, cancelled) => {
      closeStream?.();
      finish(error, cancelled);
    });
    return { ...response, message } satisfies StreamResponse;
  };
  return [interceptor];
}

/** `agentry.registry.v1.AgentService` → `AgentService`: enough to tell the services apart in a label. */
function shortServiceName(typeName: string): string {
  return typeName.slice(typeName.lastIndexOf(".") + 1);
}

/**
 * Re-iterates `source`, taking each step through `run` (which enters the call's async context: a server
 * stream's handler runs step by step as the transport reads it, outside the interceptor's own call), and
 * reports once how the iteration ended: with an error, cancelled by the reader, or done. Between steps an open
 * stream holds no suspended frame for it (see mapAsyncIterable).
 */
function iterateIn<T>(
  source: AsyncIterable<T>,
  run: <R>(step: () => Promise<R>) => Promise<R>,
  ended?: (error: unknown, cancelled: boolean) => void,
): AsyncIterable<T> {
  return mapAsyncIterable(source, {
    map: (value) => value,
    through: run,
    onEnd: () => ended?.(undefined, false),
    onError: (error) => {
      ended?.(error, false);
      return error;
    },
    onLeave: () => ended?.(undefined, true),
  });
}
