import type { AddressInfo } from "node:net";
import { AppError } from "@agentry/errors";
import { Router } from "@koa/router";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ROUTES } from "../app.js";
import type { GatewayContext, GatewayState, Principal } from "../context.js";
import type { JsonSchema } from "../openapi/convert.js";
import { buildOpenApiDocument } from "../openapi/document.js";
import { openAiRoutes } from "../standard/openai/index.js";
import { component, defineRoute, type RequestContext, type Route } from "./define.js";

const Note = z.object({ agentId: z.string(), text: z.string(), pinned: z.boolean() });
const noteBody = z.strictObject({ text: z.string().min(1) });
const noteQuery = z.strictObject({
  pinned: z.enum(["true", "false"]).transform((value) => value === "true"),
});

/** An operation no route of the product has, declared as one would be added: one `defineRoute`. */
const addNote = defineRoute({
  method: "POST",
  path: "/v1/agents/:agentId/notes",
  scope: "agents:write",
  limit: "createPerMinute",
  operationId: "addNote",
  tag: "Agents",
  summary: "Add a note",
  description: "Adds a note to the agent.",
  query: noteQuery,
  body: { schema: noteBody, component: "AddNoteRequest" },
  success: { status: 201, schema: component("NoteResponse", Note), description: "The note." },
  errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
  async handler(input) {
    const { pinned } = input.query();
    const { text } = await input.body();
    input.ctx.status = 201;
    input.ctx.body = { agentId: input.params.agentId, text, pinned };
  },
});

const BASE = "http://localhost:8080";

describe("a route declared with defineRoute", () => {
  it("is documented from its declaration alone, leaving every other part of the document as it was", () => {
    const before = buildOpenApiDocument({ routes: ROUTES, publicBaseUrl: BASE });
    const after = buildOpenApiDocument({ routes: [...ROUTES, addNote], publicBaseUrl: BASE });
    const operation = after.paths["/v1/agents/{agentId}/notes"]!.post!;
    expect(operation.operationId).toBe("addNote");
    expect(operation["x-scopes"]).toEqual(["agents:write"]);
    expect(operation["x-rate-limits"]).toEqual(["requestsPerMinute", "createPerMinute"]);
    const parameters = operation.parameters as { name?: string; in?: string }[];
    expect(parameters.filter((p) => p.name).map((p) => `${p.in} ${p.name}`)).toEqual([
      "path agentId",
      "query pinned",
    ]);
    expect(operation.requestBody).toMatchObject({
      content: { "application/json": { schema: { $ref: "#/components/schemas/AddNoteRequest" } } },
    });
    const schemas = after.components as { schemas: Record<string, { properties?: object }> };
    expect(Object.keys(schemas.schemas.NoteResponse!.properties!)).toEqual(["agentId", "text", "pinned"]);
    expect(Object.keys(schemas.schemas.AddNoteRequest!.properties!)).toEqual(["text"]);

    delete after.paths["/v1/agents/{agentId}/notes"];
    delete schemas.schemas.NoteResponse;
    delete schemas.schemas.AddNoteRequest;
    expect(after).toEqual(before);
  });

  it("refuses a declaration naming a schema the document does not have, or an operation declared twice", () => {
    const typo: Route = { ...addNote, success: { ...addNote.success, schema: "NoteResponze" } };
    expect(() => buildOpenApiDocument({ routes: [typo], publicBaseUrl: BASE })).toThrow(
      "POST /v1/agents/:agentId/notes names schema NoteResponze, which is not a component",
    );
    expect(() => buildOpenApiDocument({ routes: [addNote, addNote], publicBaseUrl: BASE })).toThrow(
      "POST /v1/agents/:agentId/notes is declared twice",
    );
  });

  it("describes the path parameters the shared ones do not, from the declaration", () => {
    const getNote = defineRoute({
      method: "GET",
      path: "/v1/agents/:agentId/notes/:noteId",
      params: { noteId: { description: "The note's id.", example: "note_1" } },
      scope: "agents:read",
      operationId: "getNote",
      tag: "Agents",
      summary: "Get a note",
      description: "One note of the agent.",
      success: { status: 200, schema: component("NoteResponse", Note), description: "The note." },
      errors: ["AGENT_NOT_FOUND"],
      async handler(input) {
        input.ctx.body = { id: input.params.noteId };
      },
    });
    const document = buildOpenApiDocument({ routes: [getNote], publicBaseUrl: BASE });
    const parameters = document.paths["/v1/agents/{agentId}/notes/{noteId}"]!.get!.parameters as JsonSchema[];
    expect(parameters.slice(0, 2)).toMatchObject([
      { name: "agentId", in: "path", required: true },
      {
        name: "noteId",
        in: "path",
        required: true,
        description: "The note's id.",
        schema: { examples: ["note_1"] },
      },
    ]);
    const undescribed: Route = { ...getNote, params: {} };
    expect(() => buildOpenApiDocument({ routes: [undescribed], publicBaseUrl: BASE })).toThrow(
      "no description of path parameter noteId",
    );
  });

  it("lists a tag no route had before after the document's own tags", () => {
    const tagged: Route = { ...addNote, tag: "Notes" };
    const document = buildOpenApiDocument({ routes: [...ROUTES, tagged], publicBaseUrl: BASE });
    const tags = document.tags as { name: string }[];
    expect(tags.map((tag) => tag.name)).toEqual([
      "Agents",
      "Messages",
      "History",
      "Usage",
      "Webhooks",
      "Plugins",
      "API keys",
      "Members",
      "Budgets",
      "Audit",
      "Service",
      "Notes",
    ]);
  });

  it("has every route that reserves (a concurrency slot, a budget) check its request before it is admitted", () => {
    const reserving = [...ROUTES, ...openAiRoutes].filter((route) => route.concurrency);
    expect(reserving.map((route) => `${route.method} ${route.path}`)).toEqual([
      "POST /v1/agents/:agentId/messages",
      "POST /v1/chat/completions",
    ]);
    for (const route of reserving) expect(route.validate, route.path).toBeTypeOf("function");
  });

  describe("served", () => {
    let server: ReturnType<Koa["listen"]>;
    let url: string;

    beforeAll(async () => {
      const app = new Koa<GatewayState>();
      // What the gateway's error envelope would say, reduced to the parts the declaration decides.
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          ctx.status = 400;
          ctx.body = { code: error.code, details: error.details };
        }
      });
      const router = new Router<GatewayState>();
      const serve = (route: Route) =>
        router.register(
          route.path,
          [route.method],
          [
            (ctx) =>
              route.handle({
                ctx: ctx as RequestContext["ctx"],
                gateway: {} as GatewayContext,
                principal: {} as Principal,
                rpc: {},
              }),
          ],
        );
      serve(addNote);
      app.use(router.routes());
      server = app.listen(0);
      await new Promise((resolve) => server.once("listening", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    const post = (query: string, body: string) =>
      fetch(`${url}/v1/agents/agt_1/notes?${query}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });

    it("hands the handler its path parameters, query and body as the schemas parse them", async () => {
      const response = await post("pinned=true", JSON.stringify({ text: "hello" }));
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ agentId: "agt_1", text: "hello", pinned: true });
    });

    it("answers 400 INVALID_REQUEST naming each problem of the query or the body", async () => {
      const badQuery = await post("pinned=maybe", JSON.stringify({ text: "hello" }));
      expect(badQuery.status).toBe(400);
      expect(await badQuery.json()).toMatchObject({
        code: "INVALID_REQUEST",
        details: [{ field: "pinned" }],
      });
      const badBody = await post("pinned=false", JSON.stringify({ text: "", extra: 1 }));
      expect(badBody.status).toBe(400);
      const { details } = (await badBody.json()) as { details: { field: string }[] };
      expect(details.map((detail) => detail.field).sort()).toEqual(["extra", "text"]);
    });
  });
});
