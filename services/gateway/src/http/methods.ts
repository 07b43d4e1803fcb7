import type { Router } from "@koa/router";
import type { Middleware, ParameterizedContext } from "koa";
import type { GatewayState } from "../context.js";

/** What the router leaves on the context: every route whose path matched the request's, whatever its method. */
export interface RoutedContext {
  matched?: { path: string | RegExp; methods: string[] }[];
  _matchedRoute?: string | RegExp;
  /** `requestTemplate`'s answer, kept with the number of matched routes it was found among. */
  _requestTemplate?: { matched: number; path: string | undefined };
}

/** How specific a path segment is: a literal beats a `:param`, which beats a `*rest`. */
function segmentRank(segment: string): number {
  if (segment.startsWith("*")) return 0;
  if (segment.startsWith(":")) return 1;
  return 2;
}

/** Negative when path `a` is more specific than `b`: at the first segment where they differ in kind. */
function bySpecificity(a: string, b: string): number {
  const left = a.split("/");
  const right = b.split("/");
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = segmentRank(right[i] ?? "*") - segmentRank(left[i] ?? "*");
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * The path template a request is for, of those the router matched: the most specific, as OpenAPI has it
 * (a concrete path before a templated one), so `/v1/agents/import` is the import route's, not an agent's.
 * Undefined when no route matched the path.
 */
export function requestTemplate(ctx: ParameterizedContext<GatewayState>): string | undefined {
  const routed = ctx as RoutedContext;
  const matched = routed.matched ?? [];
  // Found once per request (a route's chain asks, then the 405 answer may): again only if a router added routes.
  if (routed._requestTemplate?.matched === matched.length) return routed._requestTemplate.path;
  const path = mostSpecific(
    matched
      .filter((layer) => layer.methods.length > 0 && typeof layer.path === "string")
      .map((layer) => layer.path as string),
  );
  routed._requestTemplate = { matched: matched.length, path };
  return path;
}

/** The most specific of these path templates (the first of equals), as `requestTemplate` chooses. */
export function mostSpecific(paths: string[]): string | undefined {
  // Most requests match one path template, under one route per method.
  if (paths.every((path) => path === paths[0])) return paths[0];
  return [...paths].sort(bySpecificity)[0];
}

/**
 * The router's 405, 501 and OPTIONS answers, with `Allow` listing the methods of the request's own path
 * template only. The router's own `allowedMethods` lists those of every route whose path matches, which for
 * `/v1/agents/import` adds the methods of `/v1/agents/:agentId`.
 */
export function allowedMethods(router: Router<GatewayState>): Middleware<GatewayState> {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const template = requestTemplate(ctx);
    if (template === undefined) return;
    const routed = ctx as RoutedContext;
    routed._matchedRoute = template;
    const allowed = new Set<string>();
    for (const layer of routed.matched ?? []) {
      if (layer.path === template) for (const method of layer.methods) allowed.add(method);
    }
    const allow = [...allowed].join(", ");
    if (!router.methods.includes(ctx.method)) {
      ctx.status = 501;
      ctx.set("Allow", allow);
    } else if (ctx.method === "OPTIONS") {
      ctx.status = 200;
      ctx.body = "";
      ctx.set("Allow", allow);
    } else if (!allowed.has(ctx.method)) {
      ctx.status = 405;
      ctx.set("Allow", allow);
    }
  };
}
