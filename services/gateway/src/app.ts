import { AsyncResource } from "node:async_hooks";
import { AppError } from "@agentry/errors";
import { tracer } from "@agentry/observability";
import { Router } from "@koa/router";
import Koa, { type Middleware } from "koa";
import type { GatewayContext, GatewayState } from "./context.js";
import { requireScope } from "./http/auth.js";
import { errorEnvelope } from "./http/errors.js";
import { observe } from "./http/observe.js";
import { requestId } from "./http/request-id.js";
import { buildOpenApiDocument } from "./openapi/document.js";
import { docsRoutes } from "./openapi/serve.js";
import { agentRoutes } from "./routes/agents.js";
import { apiKeyRoutes } from "./routes/api-keys.js";
import { messageRoutes } from "./routes/messages.js";
import type { HandlerInput, Route } from "./routes/table.js";

/** Every REST operation, in one table: method, path, scope, rate-limit bucket and handler. */
export const ROUTES: Route[] = [...agentRoutes, ...messageRoutes, ...apiKeyRoutes];

/**
 * Per-route middleware between authentication and the handler, where rate limits, concurrency limits and
 * quotas are enforced. The composition root supplies it; the chain is
 * request id → access log → error envelope → route match → authentication → scope → **limits** → handler.
 */
export type LimitsMiddleware = (route: Route) => Middleware<GatewayState>;

/** Builds the Koa application. It does not listen: `server.ts` does, so tests can bind port 0. */
export function buildApp(
  gateway: GatewayContext,
  options: { limits?: LimitsMiddleware } = {},
): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.silent = true;

  app.use(requestId());
  app.use(accessLog(gateway));
  if (gateway.metrics || tracer()) app.use(observe(gateway));
  app.use(errorEnvelope(gateway.logger));
  app.use(async (ctx, next) => {
    if (gateway.draining) ctx.set("Connection", "close");
    await next();
  });

  const router = new Router<GatewayState>();
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  router.get("/readyz", async (ctx) => {
    const ready = !gateway.draining && (await gateway.ready().catch(() => false));
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? "ready" : "unavailable" };
  });
  docsRoutes(router, () =>
    buildOpenApiDocument({ routes: ROUTES, publicBaseUrl: gateway.config.PUBLIC_BASE_URL }),
  );
  for (const route of ROUTES) {
    const chain: Middleware<GatewayState>[] = [authenticate(gateway, route)];
    if (options.limits) chain.push(options.limits(route));
    chain.push(handle(gateway, route));
    router.register(route.path, [route.method], chain);
  }

  app.use(async (ctx, next) => {
    await next();
    if (ctx.status === 405 || ctx.status === 501) {
      throw new AppError(
        "METHOD_NOT_ALLOWED",
        `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get("Allow") || "none"}.`,
      );
    }
    if (ctx.status === 404 && ctx.body === undefined) {
      throw new AppError("NOT_FOUND", `No route ${ctx.method} ${ctx.path}.`);
    }
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

function authenticate(gateway: GatewayContext, route: Route): Middleware<GatewayState> {
  return async (ctx, next) => {
    const principal = await gateway.auth.authenticate(
      ctx.get("authorization"),
      rpcOptions(gateway, ctx.state),
    );
    requireScope(principal, route.scope);
    gateway.keyUsage.record(principal.keyId);
    ctx.state.principal = principal;
    await next();
  };
}

function handle(gateway: GatewayContext, route: Route): Middleware<GatewayState> {
  return async (ctx) => {
    await route.handle({
      ctx: ctx as HandlerInput["ctx"],
      gateway,
      principal: ctx.state.principal!,
      rpc: rpcOptions(gateway, ctx.state),
    });
  };
}

/** Every RPC carries the request id and a deadline, so the callee's logs and time budget follow the request. */
function rpcOptions(gateway: GatewayContext, state: GatewayState) {
  return { headers: { "x-request-id": state.requestId }, timeoutMs: gateway.config.RPC_TIMEOUT_MS };
}

/**
 * One line per request, written once the response has gone (or the connection closed): off the response's path,
 * with the final status and the time until the last byte was handed to the connection. It is written in the
 * request's scope, so it carries the request id.
 */
function accessLog(gateway: GatewayContext): Middleware<GatewayState> {
  return async (ctx, next) => {
    const started = performance.now();
    ctx.res.once(
      "close",
      AsyncResource.bind(() => {
        gateway.logger.info(
          {
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            durationMs: Math.round((performance.now() - started) * 10) / 10,
          },
          "request",
        );
      }),
    );
    await next();
  };
}
