import type { LimitName, Scope } from "@agentry/core";
import type { AppError, ErrorCode } from "@agentry/errors";
import type { CallOptions } from "@connectrpc/connect";
import type { ParameterizedContext } from "koa";
import type { z } from "zod";
import type { GatewayContext, GatewayState, Principal } from "../context.js";
import { readJsonBody } from "../http/body.js";
import type { JsonSchema } from "../openapi/convert.js";
import { parseOrThrow } from "../validation/issues.js";

/*
 * One declaration per REST operation (docs/gateway-routes.md): `defineRoute` holds its method, path, scope,
 * limits, request schemas, documentation and handler. The router, the scope check, the limits, the idempotency of
 * writes, request validation and the OpenAPI document are all read from it.
 *
 * A request is served in this order: authenticated, its scope checked, validated (`validate`), admitted (rate and
 * concurrency limits, budgets), then handled. A malformed request is a 400 whatever the limits or budgets say,
 * and is never counted against them.
 */

/** What every handler gets: the Koa context, the gateway's dependencies, the caller, RPC call options. */
export interface RequestContext {
  ctx: ParameterizedContext<GatewayState> & { params: Record<string, string> };
  gateway: GatewayContext;
  principal: Principal;
  rpc: CallOptions;
}

/** `"/v1/agents/:agentId/secrets/:name"` → `"agentId" | "name"`. */
type ParamNames<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;

/** The path's parameters by name, as the router decoded them. */
export type PathParams<Path extends string> = string extends Path
  ? Record<string, string>
  : { [Name in ParamNames<Path>]: string };

type Parsed<S> = S extends z.ZodType ? z.output<S> : never;

/**
 * A handler's input: the request's context, its path parameters, and its query and body as the route's schemas
 * parse them. Query and body are parsed when the handler asks, so that each route keeps its own order of checks
 * (a malformed id is a 404 before a bad body is a 400).
 */
export interface HandlerInput<Path extends string = string, Query = unknown, Body = unknown>
  extends RequestContext {
  params: PathParams<Path>;
  /** The query parameters, parsed by the route's `query` schema; otherwise `400 INVALID_REQUEST` naming each problem. */
  query(): Query;
  /**
   * The JSON body, read (size, media type, no U+0000) and parsed by the route's `body.schema`; otherwise
   * `400 INVALID_REQUEST` naming each problem. `check` sees the JSON before the schema does.
   */
  body(check?: (raw: unknown) => void): Promise<Body>;
}

/**
 * A named schema of the document (`#/components/schemas/<id>`) declared with the route that answers it, so that a
 * new operation needs no other file: `success: { schema: component("Model", Model), ... }`.
 */
export interface Component {
  id: string;
  schema: z.ZodType;
}

export const component = (id: string, schema: z.ZodType): Component => ({ id, schema });

/** The id a success names, whether a component of the document or one declared with the route. */
export const schemaId = (schema: string | Component): string =>
  typeof schema === "string" ? schema : schema.id;

/** One successful answer of an operation, as the document describes it. */
export interface SuccessDoc {
  status: 200 | 201 | 202;
  /** The schema of the JSON body: a component's id, or a `component` declared here. */
  schema: string | Component;
  description: string;
  /** Headers beyond those every response has. */
  headers?: Record<string, JsonSchema>;
  /**
   * For an other success: the query values that ask for it instead of the main one (`x-when-query`), so that SDKs
   * can type the answer of each form of the request.
   */
  whenQuery?: Record<string, boolean | string>;
  /**
   * For an other success: the body values that ask for it (`x-when-body`). The generated SDKs give such an answer
   * a method of its own (`sdkMethod`), which sends those values itself.
   */
  whenBody?: Record<string, boolean | string>;
  /** For an answer asked for by body values: the SDK method that sends them itself (`x-sdk-method`). */
  sdkMethod?: string;
  /**
   * For a main answer that is one of several schemas (`oneOf`), told apart by their content rather than by the
   * request: the SDK method that reads each other schema (`x-sdk-variants`), and, for a state that lasts, the
   * method that waits while the answer still has the values of `pending`.
   */
  sdkVariants?: Record<
    string,
    { method: string; wait?: { method: string; pending: Record<string, string> } }
  >;
}

/** A request header the operation reads, beyond those every request may send (`X-Request-Id`, `Idempotency-Key`). */
export interface HeaderParamDoc {
  name: string;
  description: string;
  schema: JsonSchema;
  /** Not an argument of the generated SDKs' methods (`x-sdk-exclude`), whose answers cannot be empty. */
  sdkExclude?: boolean;
}

/** An answer without a body (`304 Not Modified`), with the headers it carries. */
export interface EmptyResponseDoc {
  status: 304;
  description: string;
  headers?: Record<string, JsonSchema>;
}

/** How the document describes one path parameter. */
export interface ParamDoc {
  description: string;
  example: string;
  bounds?: { minLength: number; maxLength: number; pattern: string };
}

/** The JSON request body: its validation schema and the component that documents it. */
export interface BodyDoc<Body extends z.ZodType | undefined = z.ZodType | undefined> {
  /** Parses the body for `input.body()`; absent when the handler reads the JSON itself (a character file). */
  schema?: Body;
  /**
   * The body's schema in the document (`#/components/schemas/<component>`); `schema` becomes that component
   * unless the document already has it.
   */
  component: string;
  /**
   * The body is a JSON object of many shapes (a character file) that SDKs take whole, as one argument of this name
   * (`x-sdk-body-argument`), rather than field by field.
   */
  argument?: string;
  /**
   * The same operation also takes a file upload (`multipart/form-data`, read by the handler itself): the form's
   * JSON Schema and the description of the request body with both forms. The generated SDKs send the JSON form.
   */
  multipart?: { schema: JsonSchema; description: string };
}

/** Everything one REST operation is: how it is reached, guarded, limited, validated, documented and handled. */
export interface RouteDefinition<
  Path extends string = string,
  Query extends z.ZodType | undefined = z.ZodType | undefined,
  Body extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Koa router path, relative to the host (e.g. `/v1/agents/:agentId`). */
  path: Path;
  /**
   * The description of each `:name` of the path that `PATH_PARAMETERS` (openapi/operations.ts) does not have, or
   * describes otherwise for this operation.
   */
  params?: { [Name in ParamNames<Path>]?: ParamDoc };
  /** The scope the caller's key must hold; null: any valid key (reads of what the deployment serves). */
  scope: Scope | null;
  /** The endpoint's own rate-limit bucket (docs/api/limits-and-quotas.md, "Buckets"); the tier bucket always applies. */
  limit?: LimitName;
  /** Whether requests hold one of the agent's concurrency slots while they run. */
  concurrency?: boolean;
  /**
   * Whether the handler claims the request's Idempotency-Key in the registry's create transaction (CreateAgent or
   * CreateApiKey with `idempotency`, answered through `createdUnderKey`) rather than around the handler: one
   * transaction for the key and what it creates, and no second one to keep the response.
   */
  claimsKeyInCreate?: boolean;

  operationId: string;
  tag: string;
  summary: string;
  /** The operation's description; the document adds the scope and the limits it counts against. */
  description: string;
  /** The query parameters' schema: `input.query()` parses with it, and each of its fields is one documented parameter. */
  query?: Query;
  /** Query parameters the handler reads itself, one JSON Schema each (documented only). */
  queryParameters?: () => { name: string; schema: JsonSchema; required: boolean }[];
  /**
   * Query parameters that take a comma-separated list of these values: documented as arrays sent as one
   * comma-separated value (`style: form`, `explode: false`), so that clients take a list.
   */
  commaSeparated?: Record<string, readonly string[]>;
  body?: BodyDoc<Body>;
  /** Request headers the handler reads (documented as header parameters; SDKs take each as an option). */
  requestHeaders?: HeaderParamDoc[];
  success: SuccessDoc;
  /** Answers without a body, for a form of the request that asks for none (a conditional read). */
  emptyResponses?: EmptyResponseDoc[];
  /** Other successful answers, for another form of the request (a dry run). */
  otherSuccess?: SuccessDoc[];
  /** Error codes of this operation beyond the ones every authenticated operation has. */
  errors: ErrorCode[];
  /** How the list pages: by page number (`x-pagination`) or by cursor (`x-cursor-pagination`). */
  pagination?: "page" | "cursor";
  /** Answers `text/event-stream` when the body says `stream: true`. */
  stream?: boolean;
  /** Answers `text/event-stream` only, its events described by `MessageStreamEvent`. */
  eventsOnly?: boolean;
  /** Answers `application/x-ndjson`, one `success.schema` per line, instead of JSON. */
  ndjson?: boolean;
  /** Answers the object itself, without the `{success, data}` envelope (`x-envelope: false`). */
  bare?: boolean;
  /** Left out of the generated SDKs (`x-sdk-exclude`). */
  sdkExclude?: boolean;
  /**
   * Where the generated SDKs put the operation when its path does not say (`x-sdk-resource`, `x-sdk-method`):
   * the webhook routes live under `webhookEndpoints`, since every SDK's `webhooks` verifies deliveries; the
   * character file routes are methods of `agents`.
   */
  sdk?: { resource: string[]; method: string };

  /**
   * The request's own checks, run before it is admitted (limits, budgets): a route that reserves (`concurrency`)
   * must have them, so that a malformed request is refused before anything is reserved for it. It gets the
   * handler's input; the query and body it parses are the ones the handler then gets, read once.
   */
  validate?(input: HandlerInput<Path, Parsed<Query>, Parsed<Body>>): Promise<void>;

  handler(input: HandlerInput<Path, Parsed<Query>, Parsed<Body>>): Promise<void>;
}

/** A declared operation as the router, the limits and the document take it. */
export type Route = Omit<RouteDefinition, "handler" | "validate"> & {
  /** Checks the request before it is admitted (the declaration's `validate`). */
  validate?(request: RequestContext): Promise<void>;
  /** Runs the handler, with the query and body parsed by the declaration's schemas. */
  handle(request: RequestContext): Promise<void>;
};

/**
 * What serving a route takes (router, scope, limits, idempotency): a declared operation, or one in another API's wire
 * format that the same chain serves and its own module documents (the OpenAI-compatible routes, standard/openai).
 */
export type ServedRoute = Pick<
  Route,
  "method" | "path" | "scope" | "limit" | "concurrency" | "claimsKeyInCreate" | "validate" | "handle"
> & {
  /**
   * An error's body in the route's own wire format, for an answer kept under an Idempotency-Key and replayed as
   * it was first given; this API's envelope otherwise.
   */
  errorBody?(error: AppError): unknown;
};

/** Declares one REST operation; list it in `ROUTES` (app.ts) to serve and document it. */
export function defineRoute<
  const Path extends string,
  Query extends z.ZodType | undefined = undefined,
  Body extends z.ZodType | undefined = undefined,
>(definition: RouteDefinition<Path, Query, Body>): Route {
  const { handler, validate, ...route } = definition;
  const { query, body } = definition;
  const what = `${definition.method} ${definition.path}`;
  // One parse per request, whether `validate` or the handler asks first.
  const bodies = new WeakMap<object, Promise<Parsed<Body>>>();
  const inputOf = (request: RequestContext): HandlerInput<Path, Parsed<Query>, Parsed<Body>> => ({
    ...request,
    params: request.ctx.params as PathParams<Path>,
    query: () => {
      if (!query) throw new Error(`${what} declares no query schema`);
      return parseOrThrow(query, request.ctx.query, "query parameters") as Parsed<Query>;
    },
    body: (check) => {
      if (!body?.schema) throw new Error(`${what} declares no body schema`);
      const schema = body.schema;
      let parsed = bodies.get(request.ctx);
      if (!parsed) {
        parsed = readJsonBody(request.ctx).then((raw) => {
          check?.(raw);
          return parseOrThrow(schema, raw, "request body") as Parsed<Body>;
        });
        bodies.set(request.ctx, parsed);
      }
      return parsed;
    },
  });
  return {
    ...route,
    ...(validate ? { validate: (request: RequestContext) => validate(inputOf(request)) } : {}),
    handle: (request) => handler(inputOf(request)),
  };
}
