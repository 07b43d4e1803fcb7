import { type AppError, asAppError, fromConnectError, httpStatusOf } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import { ConnectError } from "@connectrpc/connect";
import type { ParameterizedContext } from "koa";
import type { GatewayState } from "../context.js";

/** Anything thrown becomes an AppError: ours as they are, RPC failures by the one table, the rest INTERNAL_ERROR. */
export function toAppError(error: unknown): AppError {
  return error instanceof ConnectError ? fromConnectError(error) : asAppError(error);
}

/**
 * Answers with the envelope of docs/api/errors-and-status-codes.md, "Envelope": `{success: false, error: {code, message, details?, requestId}}`,
 * with the status of the code and `Retry-After` when known. Internal causes are logged with the request id and
 * never sent.
 */
export function sendErrorEnvelope(
  ctx: ParameterizedContext<GatewayState>,
  thrown: unknown,
  logger: Logger,
): void {
  const error = toAppError(thrown);
  const status = httpStatusOf(error.code);
  // A 503 is an outage of something the request needed, which its own outage log reports as it starts, while
  // it lasts and when it ends; a line per refused request would bury that.
  if (status >= 500 && status !== 503)
    logger.error({ err: error.cause ?? error, code: error.code }, "request failed");
  else logger.debug({ code: error.code, message: error.message }, "request refused");
  ctx.status = status;
  if (error.retryAfterSeconds !== undefined)
    ctx.set("Retry-After", String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  ctx.body = errorEnvelope(error, ctx.state.requestId);
}

/** The body of an error response. */
export function errorEnvelope(error: AppError, requestId: string) {
  return {
    success: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
      ...error.options.extra,
      requestId,
    },
  };
}
