import { auditHeaders } from "@agentry/core";
import { Router } from "@koa/router";
import Koa, { type Middleware, type ParameterizedContext } from "koa";
import type { GatewayContext, GatewayState } from "./context.js";
import { requireScope } from "./http/auth.js";
import { connectorUpdateRoutes } from "./http/connector-updates.js";
import { authenticateRequest, consoleSessionRoutes } from "./http/console-session.js";
import { consoleRoutes } from "./http/console-static.js";
import { requestFrame } from "./http/frame.js";
import { idempotency } from "./http/idempotency.js";
import { allowedMethods, requestTemplate } from "./http/methods.js";
import { oidcRoutes } from "./http/oidc.js";
import { routesOf } from "./http/route-index.js";
import { buildOpenApiDocument } from "./openapi/document.js";
import { docsRoutes } from "./openapi/serve.js";
import { agentRoutes } from "./routes/agents.js";
import { apiKeyRoutes } from "./routes/api-keys.js";
import { auditRoutes } from "./routes/audit.js";
import { budgetRoutes } from "./routes/budgets.js";
import { characterRoutes, characterSchemaRoute } from "./routes/characters.js";
import { clientRoutes } from "./routes/clients.js";
import type { RequestContext, Route, ServedRoute } from "./routes/define.js";
import { documentRoutes } from "./routes/documents.js";
import { historyRoutes } from "./routes/history.js";
import { memberRoutes } from "./routes/members.js";
import { memoryRoutes } from "./routes/memories.js";
import { messageRoutes } from "./routes/messages.js";
import { pluginRoutes } from "./routes/plugins.js";
import { runRoutes } from "./routes/runs.js";
import { scheduleRoutes } from "./routes/schedules.js";
import { usageRoutes } from "./routes/usage.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { standardClients } from "./standard/index.js";
import { openAiFrame, openAiRoutes } from "./standard/openai/index.js";

/**
 * Every REST operation. Each is declared once, with `defineRoute` in its resource's file (routes/), and listing it
 * here serves it (router, scope, limits, idempotency, validation) and documents it (the OpenAPI document).
 */
export const ROUTES: Route[] = [
  ...agentRoutes,
  ...characterRoutes,
  ...messageRoutes,
  ...historyRoutes,
  ...runRoutes,
  ...memoryRoutes,
  ...documentRoutes,
  ...scheduleRoutes,
  ...usageRoutes,
  ...webhookRoutes,
  ...pluginRoutes,
  ...clientRoutes,
  ...apiKeyRoutes,
  ...memberRoutes,
  ...budgetRoutes,
  ...auditRoutes,
];

/**
 * Per-route middleware between authentication and the handler, which the composition root supplies. The chain is
 * request frame (id, access log, metrics, error envelope) → route match → authentication → scope → **limits**
 * (rate limits, which count every request) → Idempotency-Key → validation → **admission** (what the request
 * reserves: a concurrency slot, budgets) → handler, so that a malformed request reserves nothing.
 */
export type LimitsMiddleware = (route: ServedRoute) => Middleware<GatewayState>;

/** What a valid request reserves before its handler runs, for the routes that reserve anything. */
export type AdmissionMiddleware = (route: ServedRoute) => Middleware<GatewayState> | undefined;

/** Builds the Koa application. It does not listen: `server.ts` does, so tests can bind port 0. */
export function buildApp(
  gateway: GatewayContext,
  options: { limits?: LimitsMiddleware; admission?: AdmissionMiddleware } = {},
): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.silent = true;

  app.use(requestFrame(gateway));
  app.use(openAiFrame(gateway));

  const router = new Router<GatewayState>();
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  // Ready means this gateway takes requests: 503 only once it is draining. Its dependencies are reported, not
  // required: every gateway shares them, and while one is down callers are better served by the documented
  // 503 AGENT_UNAVAILABLE (with Retry-After) than by a load balancer with no gateway left to send them to.
  router.get("/readyz", async (ctx) => {
    if (gateway.draining) {
      ctx.status = 503;
      ctx.body = { status: "draining" };
      return;
    }
    ctx.body = { status: "ready", dependencies: await gateway.dependencies() };
  });
  docsRoutes(
    router,
    () => gateway.providers.get(),
    (providers) =>
      buildOpenApiDocument({ routes: ROUTES, publicBaseUrl: gateway.config.PUBLIC_BASE_URL, providers }),
  );
  characterSchemaRoute(router);
  consoleSessionRoutes(router, gateway);
  oidcRoutes(router, gateway);
  connectorUpdateRoutes(router, gateway);
  consoleRoutes(router, gateway.config.CONSOLE_DIR);
  for (const route of [...ROUTES, ...openAiRoutes]) {
    router.register(
      route.path,
      [route.method],
      [serveRoute(gateway, route, options.limits?.(route), options.admission?.(route))],
    );
  }

  app.use(routesOf(router));
  app.use(allowedMethods(router));
  // The standard protocols check their arguments before they ask for an operation's limits and admission.
  const { limits, admission } = options;
  app.use(standardClients(gateway, limits && ((route) => chain(limits(route), admission?.(route)))));
  return app;
}

/**
 * A route's own chain, in one middleware (see `requestFrame` for why): authentication, the key's scope, the rate
 * limits, the Idempotency-Key of a write, the request's own checks (`validate`), what it reserves (admission: so a
 * malformed request reserves nothing), then the handler. Neither this nor the handler waits on the steps after it, so only the limits' slot
 * (released when the request ends) keeps a frame open for the request's whole life.
 */
function serveRoute(
  gateway: GatewayContext,
  route: ServedRoute,
  limits: Middleware<GatewayState> | undefined,
  admission: Middleware<GatewayState> | undefined,
): Middleware<GatewayState> {
  const input = (ctx: ParameterizedContext<GatewayState>): RequestContext => ({
    ctx: ctx as RequestContext["ctx"],
    gateway,
    principal: ctx.state.principal!,
    rpc: auditedRpcOptions(gateway, ctx),
  });
  const keyed = idempotency(gateway, route, input);
  const run = (ctx: ParameterizedContext<GatewayState>) => route.handle(input(ctx));
  const admitted = async (ctx: ParameterizedContext<GatewayState>) => {
    await route.validate?.(input(ctx));
    return admission ? admission(ctx, () => run(ctx)) : run(ctx);
  };
  const handle = keyed
    ? (ctx: ParameterizedContext<GatewayState>) => keyed(ctx, () => admitted(ctx))
    : admitted;
  return async (ctx, next) => {
    // A more specific route's path is the request's (`/v1/agents/import` rather than `:agentId`): not this one's.
    if (requestTemplate(ctx) !== route.path) return next();
    const principal = await authenticateRequest(gateway, ctx, rpcOptions(gateway, ctx.state));
    if (route.scope) requireScope(principal, route.scope);
    if (principal.keyId !== "") gateway.keyUsage.record(principal.keyId);
    ctx.state.principal = principal;
    return limits ? limits(ctx, () => handle(ctx)) : handle(ctx);
  };
}

/** Every RPC carries the request id and a deadline, so the callee's logs and time budget follow the request. */
function rpcOptions(gateway: GatewayContext, state: GatewayState) {
  return { headers: { "x-request-id": state.requestId }, timeoutMs: gateway.config.RPC_TIMEOUT_MS };
}

/** Two middlewares as one, the first around the second; either may be absent. */
function chain(
  outer: Middleware<GatewayState>,
  inner: Middleware<GatewayState> | undefined,
): Middleware<GatewayState> {
  return inner ? (ctx, next) => outer(ctx, () => inner(ctx, next)) : outer;
}

/**
 * A handler's RPCs also carry who is making the request and from where, so that the service which makes a change
 * records it on the audit log with them (docs/api/audit.md).
 */
function auditedRpcOptions(gateway: GatewayContext, ctx: ParameterizedContext<GatewayState>) {
  const { actor } = ctx.state.principal!;
  return {
    headers: auditHeaders({
      actor: { type: actor.type, id: actor.id },
      ip: ctx.ip || null,
      requestId: ctx.state.requestId,
    }),
    timeoutMs: gateway.config.RPC_TIMEOUT_MS,
  };
}
