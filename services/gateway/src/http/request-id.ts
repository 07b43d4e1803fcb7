import { newId } from "@agentry/core";
import { withRequestScope } from "@agentry/logging";
import type { Middleware } from "koa";
import type { GatewayState } from "../context.js";

/** An incoming id is reused only when it is a plain token of sane length, so it is safe to log and echo. */
const REUSABLE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Gives every request an id, echoes it in `X-Request-Id`, and scopes every log line of the request to it. */
export function requestId(): Middleware<GatewayState> {
  return async (ctx, next) => {
    const incoming = ctx.get("x-request-id");
    const id = REUSABLE.test(incoming) ? incoming : newId("request");
    ctx.state.requestId = id;
    ctx.set("X-Request-Id", id);
    await withRequestScope({ requestId: id }, next);
  };
}
