import type { Layer, Router } from "@koa/router";
import type { Middleware, Next, ParameterizedContext } from "koa";
import type { GatewayState } from "../context.js";
import { mostSpecific, type RoutedContext } from "./methods.js";

type Context = ParameterizedContext<GatewayState>;
type RouteLayer = Layer<GatewayState>;

/** One path segment's place in the index: the layers whose path ends here, and where the next segment leads. */
interface Node {
  literals: Map<string, Node>;
  param?: Node;
  /** A path that reaches this node may match a layer the index does not model (a wildcard, a pattern). */
  opaque: boolean;
  /** The layers whose path ends here, with their parameters' names in the path's order. */
  layers: { layer: RouteLayer; order: number; names: string[] }[];
}

/** The paths the index answers: whole, non-empty segments of characters that need no decoding. */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9._~-]+)+$/;
const PARAM = /^:[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A segment with any of these is a pattern the index leaves to the router. */
const PATTERN = /[:*?+!()[\]{}\\]/;

const newNode = (): Node => ({ literals: new Map(), opaque: false, layers: [] });

/**
 * The router's dispatch, with its match done once from an index of its layers' paths built when the first request
 * arrives: a request's path is looked up segment by segment (literals case-insensitively, as the router matches),
 * which finds every layer whose path matches it, and the request goes straight to its layer when exactly one
 * layer serves its method and that layer's path is the request's template (`mostSpecific`). Everything else (no
 * route, another method, a trailing slash, an escaped character, a wildcard path) goes through the router as
 * before, so its 404, 405 and 501 answers are the router's. The context gets what the router would give it:
 * `params` (added to those already set), `matched`, `_matchedRoute`, `routerPath`, `captures`.
 */
export function routesOf(router: Router<GatewayState>): Middleware<GatewayState> {
  const dispatch = router.routes() as Middleware<GatewayState>;
  let index: { root: Node; layers: number } | undefined;
  const middleware: Middleware<GatewayState> & { router?: Router<GatewayState> } = (ctx, next) => {
    if (index?.layers !== router.stack.length)
      index = { root: buildIndex(router), layers: router.stack.length };
    const found = PLAIN_PATH.test(ctx.path) ? lookUp(index.root, ctx.path) : undefined;
    if (!found) return dispatch(ctx, next);
    const matched = found.map((match) => match.layer);
    let served: (typeof found)[number] | undefined;
    for (const match of found) {
      if (!match.layer.methods.includes(ctx.method)) continue;
      if (served) return dispatch(ctx, next);
      served = match;
    }
    if (!served) return dispatch(ctx, next);
    const template = served.layer.path as string;
    if (mostSpecific(matched.map((layer) => layer.path as string)) !== template) return dispatch(ctx, next);
    return serve(ctx, next, router, matched, template, served);
  };
  // As on the router's own dispatch, so the router stays reachable from the app's middleware.
  middleware.router = router;
  return middleware;
}

function serve(
  ctx: Context,
  next: Next,
  router: Router<GatewayState>,
  matched: RouteLayer[],
  template: string,
  served: { layer: RouteLayer; names: string[]; values: string[] },
): Promise<unknown> {
  const routed = ctx as Context & RoutedContext & Record<string, unknown>;
  const params: Record<string, string> = { ...(routed.params as Record<string, string> | undefined) };
  served.names.forEach((name, i) => {
    params[name] = served.values[i]!;
  });
  routed.matched = matched;
  routed._requestTemplate = { matched: matched.length, path: template };
  routed.router = router;
  routed.routeMatched = true;
  routed.captures = served.values;
  routed.params = params;
  (ctx.request as { params?: Record<string, string> }).params = params;
  routed.routerPath = template;
  routed._matchedRoute = template;
  if (served.layer.name) routed._matchedRouteName = served.layer.name;
  const stack = served.layer.stack as Middleware<GatewayState>[];
  const run = (i: number): Promise<unknown> =>
    i === stack.length ? next() : Promise.resolve(stack[i]!(ctx, () => run(i + 1) as Promise<void>));
  return run(0);
}

/** Indexes every layer of the router by its path's segments; a path the index cannot model marks its node opaque. */
function buildIndex(router: Router<GatewayState>): Node {
  const root = newNode();
  const { opts } = router;
  if (opts.host || opts.prefix || opts.exclusive || opts.routerPath) {
    root.opaque = true;
    return root;
  }
  router.stack.forEach((layer, order) => {
    const options = layer.opts as {
      sensitive?: boolean;
      strict?: boolean;
      end?: boolean;
      ignoreCaptures?: boolean;
    };
    const modelled =
      typeof layer.path === "string" &&
      layer.methods.length > 0 &&
      !options.sensitive &&
      !options.strict &&
      options.end !== false &&
      !options.ignoreCaptures;
    if (!modelled) {
      root.opaque = true;
      return;
    }
    let node = root;
    const names: string[] = [];
    for (const segment of (layer.path as string).split("/").slice(1)) {
      if (PARAM.test(segment)) {
        names.push(segment.slice(1));
        node.param ??= newNode();
        node = node.param;
      } else if (PATTERN.test(segment) || segment === "") {
        node.opaque = true;
        return;
      } else {
        const key = segment.toLowerCase();
        let child = node.literals.get(key);
        if (!child) {
          child = newNode();
          node.literals.set(key, child);
        }
        node = child;
      }
    }
    node.layers.push({ layer, order, names });
  });
  return root;
}

/**
 * Every layer whose path matches `path`, in the router's order, each with its parameters' values; undefined when a
 * layer the index does not model might match too.
 */
function lookUp(root: Node, path: string) {
  const segments = path.split("/").slice(1);
  const found: { layer: RouteLayer; order: number; names: string[]; values: string[] }[] = [];
  let opaque = false;
  const walk = (node: Node, depth: number, values: string[]): void => {
    if (node.opaque) opaque = true;
    if (opaque) return;
    if (depth === segments.length) {
      for (const entry of node.layers) found.push({ ...entry, values });
      return;
    }
    const segment = segments[depth]!;
    const literal = node.literals.get(segment.toLowerCase());
    if (literal) walk(literal, depth + 1, values);
    if (node.param) walk(node.param, depth + 1, [...values, segment]);
  };
  walk(root, 0, []);
  if (opaque) return undefined;
  return found.sort((a, b) => a.order - b.order);
}
