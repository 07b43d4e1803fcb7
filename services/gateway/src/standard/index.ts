import type { Router } from "@koa/router";
import type { LimitsMiddleware } from "../app.js";
import type { GatewayContext, GatewayState } from "../context.js";
import { a2aRoutes } from "./a2a.js";
import { mcpRoutes } from "./mcp.js";

/**
 * The agents through standard protocols' own clients (MCP, A2A), on the same keys, scopes, limits, history and
 * usage as the REST API. Their wire formats are the protocols', described by them rather than by the OpenAPI
 * document, which links here.
 */
export function standardClientRoutes(
  router: Router<GatewayState>,
  gateway: GatewayContext,
  limits: LimitsMiddleware | undefined,
): void {
  mcpRoutes(router, gateway, limits);
  a2aRoutes(router, gateway, limits);
}
