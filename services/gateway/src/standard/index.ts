import { Router } from "@koa/router";
import type { GatewayContext, GatewayState } from "../context.js";
import { a2aRoutes } from "./a2a.js";
import type { LimitsMiddleware } from "./access.js";
import { mcpRoutes } from "./mcp.js";

/**
 * The agents through standard protocols' own clients (MCP, A2A), on the same keys, scopes, limits, history and
 * usage as the REST API. Their wire formats are the protocols' and are described by them, so they have a router
 * of their own beside the REST route table, which the OpenAPI document describes (and only links these).
 */
export function standardClients(
  gateway: GatewayContext,
  limits: LimitsMiddleware | undefined,
): ReturnType<Router<GatewayState>["routes"]> {
  const router = new Router<GatewayState>();
  mcpRoutes(router, gateway, limits);
  a2aRoutes(router, gateway, limits);
  return router.routes();
}
