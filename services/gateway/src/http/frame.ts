import { AppError } from "@agentry/errors";
import { type Logger, withRequestScope } from "@agentry/logging";
import { observeHttpRequest, tracer } from "@agentry/observability";
import type { Middleware, ParameterizedContext } from "koa";
import type { GatewayContext, GatewayState } from "../context.js";
import { sendErrorEnvelope } from "./errors.js";
import { requestIdOf } from "./request-id.js";

type Context = ParameterizedContext<GatewayState>;

/** What requests that matched no route are counted under, so unknown paths cannot multiply the series. */
const UNMATCHED = "unmatched";

/**
 * What every request goes through before its route, in this order: its id (echoed in `X-Request-Id`) and the
 * log scope that puts it on every line, the access log line, its metrics and span, the error envelope, and the
 * 404 and 405 answers of paths and methods no route serves.
 *
 * One middleware rather than one each: every middleware that awaits the rest of the chain stays suspended, with
 * its promises and closures, for as long as the request runs, and a streamed reply can run for minutes, many at
 * a time.
 */
export function requestFrame(gateway: GatewayContext): Middleware<GatewayState> {
  const observed = gateway.metrics !== undefined || tracer() !== undefined;
  const accessLog = accessLogger(gateway.logger);

  async function serve(ctx: Context, next: () => Promise<void>, requestId: string): Promise<void> {
    writeAccessLogOnClose(accessLog, ctx, requestId);
    const observation = observed ? observeHttpRequest(gateway.metrics, ctx.method, ctx.headers) : undefined;
    try {
      await (observation ? observation.run(next) : next());
      refuseUnmatched(ctx);
    } catch (thrown) {
      sendErrorEnvelope(ctx, thrown, gateway.logger);
    } finally {
      observation?.end((ctx as { _matchedRoute?: string })._matchedRoute ?? UNMATCHED, ctx.status, requestId);
    }
  }

  return (ctx, next) => {
    // The request's and response's headers directly: Koa's `get` and `set` add a lookup and arrays per header.
    const requestId = requestIdOf(headerOf(ctx.req.headers["x-request-id"]));
    ctx.state.requestId = requestId;
    ctx.res.setHeader("X-Request-Id", requestId);
    return withRequestScope({ requestId }, () => serve(ctx, next, requestId));
  };
}

/** A request header's value, "" when absent (Node joins a repeated one into one string). */
function headerOf(value: string | string[] | undefined): string {
  return typeof value === "string" ? value : "";
}

/**
 * The logger of access lines: the process's, without its redaction of secrets. An access line's fields are fixed
 * (method, path without its query, status, duration) and hold none, and the redaction's walk of every line's
 * object was the largest part of writing it (about 7 of 10 µs).
 */
export function accessLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: [] } });
}

/**
 * One line per request, written once the response has gone (or the connection closed): off the response's path,
 * with the final status and the time until the last byte was handed to the connection. It is written in the
 * request's scope, so it carries the request id.
 */
export function writeAccessLogOnClose(accessLog: Logger, ctx: Context, requestId: string): void {
  const started = performance.now();
  // Entered again rather than kept with AsyncResource.bind, which costs a read about 4 % of its CPU time.
  ctx.res.once("close", () =>
    withRequestScope({ requestId }, () =>
      accessLog.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
        },
        "request",
      ),
    ),
  );
}

/** The router left 404 (no route), or 405 / 501 (no such method on a route): said in the error envelope. */
function refuseUnmatched(ctx: Context): void {
  if (ctx.status === 405 || ctx.status === 501) {
    throw new AppError(
      "METHOD_NOT_ALLOWED",
      `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get("Allow") || "none"}.`,
    );
  }
  if (ctx.status === 404 && ctx.body === undefined) {
    throw new AppError("NOT_FOUND", `No route ${ctx.method} ${ctx.path}.`);
  }
}
