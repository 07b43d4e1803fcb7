import { z } from "zod";
import { NUL_FREE_PATTERN } from "../http/body.js";

/** A JSON Schema (draft 2020-12) object, as OpenAPI 3.1 embeds it. */
export type JsonSchema = { [keyword: string]: unknown };

/** Where the document keeps named schemas; every `$ref` between them points here. */
export const SCHEMA_REF_PREFIX = "#/components/schemas/";

export const schemaRef = (id: string) => ({ $ref: `${SCHEMA_REF_PREFIX}${id}` });

/** Zod schemas that become named components, converted together so they can refer to each other. */
export type ComponentRegistry = z.core.$ZodRegistry<{ id: string }>;

export function componentRegistry(): ComponentRegistry {
  return z.registry<{ id: string }>();
}

type Override = NonNullable<z.core.ToJSONSchemaParams["override"]>;

function replace(target: JsonSchema, source: JsonSchema): void {
  for (const key of Object.keys(target)) delete target[key];
  Object.assign(target, source);
}

/**
 * Any JSON value an agent or a message may hold: no string in it, and no object key, at any depth, holds U+0000,
 * which `readJsonBody` refuses anywhere in a request body. Responses hold only such values too, since they echo
 * what requests stored.
 */
export const JSON_VALUE_SCHEMA_ID = "JsonValue";

export function jsonValueSchema(): JsonSchema {
  return {
    description:
      "Any JSON value. No string in it, and no object key, at any depth, may contain the NUL character (U+0000); numbers are kept as double-precision floats, so one beyond their range (about ±1.8e308) is refused.",
    pattern: NUL_FREE_PATTERN,
    propertyNames: { pattern: NUL_FREE_PATTERN },
    additionalProperties: schemaRef(JSON_VALUE_SCHEMA_ID),
    items: schemaRef(JSON_VALUE_SCHEMA_ID),
  };
}

/**
 * Adjusts zod's output where the wire format says more (or less) than zod can:
 * - `z.json()` values are any JSON without U+0000 (`JsonValue`; zod emits a recursive union), and so are the
 *   keys and values of objects that take keys of the caller's choosing;
 * - every other string of a request refuses U+0000 too, unless an enum, a format or its own pattern already
 *   does (responses make no such promise about text that does not come from requests, such as replies);
 * - a string parsed into a number (query parameters) is documented as the number it must be, and `true` or
 *   `false` parsed into a boolean as the boolean;
 * - in responses, objects that are not strict allow fields added later in v1, so clients must tolerate them;
 * - an RFC 3339 `format: date-time` needs no regular expression beside it.
 */
function overrideFor(io: "input" | "output"): Override {
  return ({ zodSchema, jsonSchema }) => {
    const json = jsonSchema as JsonSchema;
    const def = zodSchema._zod.def;
    if (def.type === "lazy") replace(json, schemaRef(JSON_VALUE_SCHEMA_ID));
    const extra = json.additionalProperties;
    if (def.type === "record" || (def.type === "object" && typeof extra === "object")) {
      json.propertyNames = { pattern: NUL_FREE_PATTERN };
    }
    if (def.type === "object" && typeof extra === "object" && Object.keys(extra as object).length === 0) {
      json.additionalProperties = schemaRef(JSON_VALUE_SCHEMA_ID);
    }
    if (
      io === "input" &&
      json.type === "string" &&
      json.pattern === undefined &&
      json.enum === undefined &&
      json.const === undefined &&
      json.format === undefined
    ) {
      json.pattern = NUL_FREE_PATTERN;
    }
    if (def.type === "pipe" && (def.out as z.core.$ZodType)._zod.def.type === "number") {
      const { $schema: _, ...number } = z.toJSONSchema(def.out as z.core.$ZodType, {
        target: "draft-2020-12",
      }) as JsonSchema;
      const description = json.description;
      replace(json, { ...number, ...(description ? { description } : {}) });
    }
    if (def.type === "pipe" && isBooleanText(def.in as z.core.$ZodType)) {
      const { description, default: fallback } = json;
      replace(json, {
        type: "boolean",
        ...(fallback === undefined ? {} : { default: fallback === "true" }),
        ...(description ? { description } : {}),
      });
    }
    if (def.type === "default" && json.default === undefined) json.default = def.defaultValue;
    if (io === "output" && def.type === "object" && def.catchall === undefined)
      delete json.additionalProperties;
    if (json.format === "date-time") delete json.pattern;
  };
}

/** An enum of exactly `"true"` and `"false"` (with a default or not): a boolean as query parameters spell it. */
function isBooleanText(schema: z.core.$ZodType): boolean {
  const def = schema._zod.def;
  if (def.type === "default") return isBooleanText((def as z.core.$ZodDefaultDef).innerType);
  if (def.type !== "enum") return false;
  const values = Object.values((def as z.core.$ZodEnumDef).entries).sort();
  return values.length === 2 && values[0] === "false" && values[1] === "true";
}

/**
 * Inlines the definitions zod shares between schemas (`__shared`): after the override they are plain values,
 * and a `$ref` into them would not resolve inside an OpenAPI document.
 */
function inlineShared(value: unknown, shared: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => inlineShared(item, shared));
  if (typeof value !== "object" || value === null) return value;
  const object = value as JsonSchema;
  const ref = object.$ref;
  if (typeof ref === "string" && ref.includes("__shared#/$defs/")) {
    const name = ref.slice(ref.lastIndexOf("/") + 1);
    const target = shared[name];
    if (target === undefined) throw new Error(`unresolved shared schema ${ref}`);
    const { $ref: _, ...rest } = object;
    return { ...(inlineShared(target, shared) as JsonSchema), ...rest };
  }
  return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, inlineShared(item, shared)]));
}

/**
 * Converts every schema of a registry to JSON Schema 2020-12, keyed by id, `$ref`s pointing at
 * `#/components/schemas/<id>`. Request bodies convert with `io: "input"` (what a caller may send), responses
 * with `io: "output"` (what the service sends).
 */
export function convertRegistry(
  registry: ComponentRegistry,
  io: "input" | "output",
): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io,
    unrepresentable: "throw",
    override: overrideFor(io),
    uri: (id) => `${SCHEMA_REF_PREFIX}${id}`,
  }) as { schemas: Record<string, JsonSchema> };
  const { __shared: sharedEntry, ...named } = schemas;
  const shared = ((sharedEntry as JsonSchema | undefined)?.$defs ?? {}) as Record<string, unknown>;
  const out: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(named)) {
    const { $schema: _schema, $id: _id, ...rest } = schema;
    out[id] = inlineShared(rest, shared) as JsonSchema;
  }
  return out;
}

/** One schema on its own (no components), e.g. a query parameter's. */
export function convertSchema(schema: z.core.$ZodType, io: "input" | "output"): JsonSchema {
  const registry = componentRegistry();
  registry.add(schema, { id: "schema" });
  return convertRegistry(registry, io).schema!;
}
