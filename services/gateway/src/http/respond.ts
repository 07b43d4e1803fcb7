import type { ParameterizedContext } from "koa";
import type { GatewayState } from "../context.js";

/** The `Content-Type` Koa writes for `ctx.type = "application/json"`. */
const JSON_TYPE = "application/json; charset=utf-8";

/**
 * Answers with JSON already encoded: the type is set on the response first, so Koa neither guesses one from the
 * body nor looks the name up, and the body is written as it is, its length known without a pass over it.
 */
export function sendJsonBytes(ctx: ParameterizedContext<GatewayState>, body: Buffer): void {
  ctx.res.setHeader("Content-Type", JSON_TYPE);
  ctx.body = body;
}
