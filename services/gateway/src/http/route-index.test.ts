import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { Router } from "@koa/router";
import Koa from "koa";
import { describe, expect, it } from "vitest";
import { ROUTES } from "../app.js";
import type { GatewayState } from "../context.js";
import { openAiRoutes } from "../standard/openai/index.js";
import { allowedMethods, requestTemplate } from "./methods.js";
import { routesOf } from "./route-index.js";

/**
 * A router with the gateway's operations and paths of the other kinds it serves (a wildcard, a literal beside a
 * parameter), each answering which of its layers served the request, with what.
 */
function gatewayRouter(): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const answer = (name: string) => (ctx: Koa.ParameterizedContext<GatewayState>, next: Koa.Next) => {
    // As the gateway's routes do: a less specific path's route leaves the request to the request's own.
    if (requestTemplate(ctx) !== ctx.routerPath) return next();
    ctx.body = {
      name,
      params: ctx.params,
      matched: (ctx as { matched?: { path: string }[] }).matched?.map((layer) => layer.path),
      route: (ctx as { _matchedRoute?: string })._matchedRoute,
    };
    return Promise.resolve();
  };
  router.get("/healthz", answer("healthz"));
  router.get("/console", answer("console"));
  router.get("/console/*path", answer("console page"));
  router.get("/docs/assets/:file", answer("docs asset"));
  router.post("/v1/connectors/:type/:agentId", answer("connector"));
  for (const route of [...ROUTES, ...openAiRoutes]) {
    router.register(route.path, [route.method], [answer(`${route.method} ${route.path}`)]);
  }
  return router;
}

async function request(app: Koa<GatewayState>, method: string, url: string) {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.url = url;
  req.headers = { host: "127.0.0.1" };
  const res = new ServerResponse(req);
  let body = "";
  res.write = ((chunk: string | Buffer) => {
    body += String(chunk);
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: string | Buffer) => {
    if (chunk) body += String(chunk);
    return res;
  }) as typeof res.end;
  await app.callback()(req, res);
  return { status: res.statusCode, allow: res.getHeader("allow"), body };
}

function appWith(dispatch: (router: Router<GatewayState>) => Koa.Middleware<GatewayState>) {
  const router = gatewayRouter();
  const app = new Koa<GatewayState>();
  app.silent = true;
  app.use(dispatch(router));
  app.use(allowedMethods(router));
  return app;
}

describe("routesOf", () => {
  it("serves every request as the router does: the same route, parameters, 404, 405 and 501", async () => {
    const indexed = appWith(routesOf);
    const routed = appWith((router) => router.routes() as Koa.Middleware<GatewayState>);
    const paths = new Set<string>(["/", "/healthz", "/healthz/", "/HEALTHZ", "/console", "/console/a/b.js"]);
    paths.add("/docs/assets/app.css").add("/v1/connectors/slack/agent_1").add("/v1/agents/import");
    paths.add("/V1/Agents/Import").add("/v1/agents/agent_%41").add("/v1//agents").add("/v1/nothing/here");
    for (const route of [...ROUTES, ...openAiRoutes]) {
      const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => `${name}_1`);
      paths.add(path).add(`${path}/`).add(path.toUpperCase()).add(`${path}/extra`);
    }
    const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"];
    let compared = 0;
    for (const path of paths) {
      for (const method of methods) {
        const expected = await request(routed, method, path);
        expect(await request(indexed, method, path), `${method} ${path}`).toEqual(expected);
        compared += 1;
      }
    }
    const templates = new Set([...ROUTES, ...openAiRoutes].map((route) => route.path));
    expect(compared).toBeGreaterThan(templates.size * 4 * methods.length);
  });

  it("serves a route's request without the router's own match", async () => {
    let routerMatches = 0;
    const app = appWith((router) => {
      const match = router.match.bind(router);
      router.match = (path, method) => {
        routerMatches += 1;
        return match(path, method);
      };
      return routesOf(router);
    });
    const answer = await request(app, "GET", "/v1/agents/agent_1");
    expect(routerMatches).toBe(0);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({
      name: "GET /v1/agents/:agentId",
      params: { agentId: "agent_1" },
      route: "/v1/agents/:agentId",
    });
    expect((await request(app, "GET", "/v1/agents/import")).status).toBe(405);
    expect((await request(app, "GET", "/v1/agents/import")).allow).toBe("POST");
    // The 405 is the router's own.
    expect(routerMatches).toBe(2);
  });
});
