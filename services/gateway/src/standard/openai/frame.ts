import { isId } from "@agentry/core";
import { AppError, httpStatusOf } from "@agentry/errors";
import type { Middleware } from "koa";
import type { GatewayContext, GatewayState } from "../../context.js";
import { readRawBody } from "../../http/body.js";
import { toAppError } from "../../http/errors.js";
import { CHAT_COMPLETIONS_PATH, isOpenAiPath, openAiError } from "./wire.js";

/**
 * What the OpenAI-compatible routes need around the common chain:
 * - their errors in OpenAI's shape, `{error: {message, type, code, param}}`, with this API's statuses and
 *   `Retry-After`, so OpenAI's SDKs raise their typed errors (authentication and limits included, which the
 *   common chain decides before the handler);
 * - the agent a chat completion addresses, read from the body's `model` before the limits run, as the path's
 *   `agentId` would be for a message: its message bucket and concurrency slots are the agent's own.
 */
export function openAiFrame(gateway: GatewayContext): Middleware<GatewayState> {
  return async (ctx, next) => {
    if (!isOpenAiPath(ctx.path)) return next();
    try {
      if (ctx.method === "POST" && ctx.path === CHAT_COMPLETIONS_PATH) {
        const agentId = await addressedAgentId(ctx);
        // The router keeps parameters already set on the context and adds the path's (none here).
        if (agentId) (ctx as { params?: Record<string, string> }).params = { agentId };
      }
      await next();
      if (ctx.respond === false) return;
      if (ctx.status === 405) {
        throw new AppError("METHOD_NOT_ALLOWED", `${ctx.method} is not allowed on ${ctx.path}.`);
      }
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError("NOT_FOUND", `No route ${ctx.method} ${ctx.path}.`);
      }
    } catch (thrown) {
      const error = toAppError(thrown);
      const status = httpStatusOf(error.code);
      if (status >= 500 && status !== 503) {
        gateway.logger.error({ err: error.cause ?? error, code: error.code }, "request failed");
      } else gateway.logger.debug({ code: error.code, message: error.message }, "request refused");
      ctx.status = status;
      if (error.retryAfterSeconds !== undefined)
        ctx.set("Retry-After", String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
      ctx.body = openAiError(error);
    }
  };
}

/** The body's `model` when it is an agent id; anything else is left for the handler to refuse. */
async function addressedAgentId(ctx: Parameters<Middleware<GatewayState>>[0]): Promise<string | undefined> {
  if (!ctx.is("application/json")) return undefined;
  try {
    const body = JSON.parse(await readRawBody(ctx)) as { model?: unknown };
    return typeof body.model === "string" && isId("agent", body.model) ? body.model : undefined;
  } catch {
    return undefined;
  }
}
