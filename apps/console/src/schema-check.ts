import type { FieldIssue } from "@agentry/sdk";
import { ApiError } from "./api";

/**
 * Checks a request body against the schemas of the OpenAPI document this deployment publishes, so that the page
 * refuses what the API would refuse before a request (and a unit of its rate limit) is spent. The document is the
 * one copy of the bounds; this reads only the keywords it uses.
 */

export type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  if?: Schema;
  then?: Schema;
  description?: string;
};

export interface OpenApiDocument {
  components?: { schemas?: Record<string, Schema> };
}

let loaded: Promise<OpenApiDocument | null> | undefined;

/** The document at `/v1/openapi.json`, fetched once per page load; null when it cannot be read. */
export function openApiDocument(): Promise<OpenApiDocument | null> {
  loaded ??= fetch("/v1/openapi.json", { headers: { accept: "application/json" } }).then(
    (response) => (response.ok ? (response.json() as Promise<OpenApiDocument>) : null),
    () => null,
  );
  return loaded;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function typeFits(expected: string | string[] | undefined, value: unknown): boolean {
  if (expected === undefined) return true;
  const actual = typeOf(value);
  const types = Array.isArray(expected) ? expected : [expected];
  return types.some((type) => type === actual || (type === "number" && actual === "integer"));
}

const fieldName = (path: string) => path || "body";

/** What is wrong with `value` under `schema`, one issue per field; empty when it fits. */
export function schemaIssues(
  doc: OpenApiDocument,
  schema: Schema,
  value: unknown,
  path = "",
  described?: string,
): FieldIssue[] {
  if (schema.$ref) {
    const target = doc.components?.schemas?.[schema.$ref.replace("#/components/schemas/", "")];
    return target ? schemaIssues(doc, target, value, path, schema.description ?? described) : [];
  }
  const about = schema.description ?? described;
  const issue = (text: string): FieldIssue[] => [{ field: fieldName(path), issue: text }];
  for (const part of schema.allOf ?? []) {
    const issues = schemaIssues(doc, part, value, path, about);
    if (issues.length > 0) return issues;
  }
  if (schema.if && schemaIssues(doc, schema.if, value, path).length === 0 && schema.then) {
    const issues = schemaIssues(doc, schema.then, value, path, about);
    if (issues.length > 0) return issues;
  }
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) {
    const tried = choices.map((choice) => schemaIssues(doc, choice, value, path, about));
    if (tried.some((issues) => issues.length === 0)) return [];
    // The issues of the choice of the value's own type say the most; otherwise the field's description.
    const sameType = choices.findIndex((choice) => choice.type !== undefined && typeFits(choice.type, value));
    return sameType >= 0 ? tried[sameType]! : issue(about ? `does not fit: ${about}` : "has the wrong shape");
  }
  if (!typeFits(schema.type, value)) {
    const expected = Array.isArray(schema.type) ? schema.type.join(" or ") : schema.type;
    return issue(`must be ${expected === "integer" ? "a whole number" : `a ${expected}`}`);
  }
  if (schema.const !== undefined && value !== schema.const)
    return issue(`must be ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value)) {
    return issue(`must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(", ")}`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum)
      return issue(`must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      return issue(`must be at most ${schema.maximum}`);
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) {
      return issue(`must be at least ${schema.minLength} characters`);
    }
    if (schema.maxLength !== undefined && length > schema.maxLength) {
      return issue(`must be at most ${schema.maxLength.toLocaleString("en")} characters`);
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) {
      return issue(about ? `does not fit: ${about}` : "is not in the expected form");
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      return issue(`must hold at least ${schema.minItems} items`);
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      return issue(`must hold at most ${schema.maxItems} items`);
    }
    if (schema.items) {
      const items = schema.items;
      return value.flatMap((item, index) => schemaIssues(doc, items, item, `${path}[${index}]`));
    }
  }
  if (typeOf(value) === "object") {
    const record = value as Record<string, unknown>;
    const issues: FieldIssue[] = [];
    for (const name of schema.required ?? []) {
      if (!(name in record)) issues.push({ field: path ? `${path}.${name}` : name, issue: "is required" });
    }
    for (const [name, item] of Object.entries(record)) {
      const field = path ? `${path}.${name}` : name;
      const known = schema.properties?.[name];
      if (known) issues.push(...schemaIssues(doc, known, item, field));
      else if (schema.additionalProperties === false) issues.push({ field, issue: "is not a known field" });
      else if (typeof schema.additionalProperties === "object") {
        issues.push(...schemaIssues(doc, schema.additionalProperties, item, field));
      }
    }
    return issues;
  }
  return [];
}

/**
 * Throws an ApiError worded as the API's 400 when a request body does not fit the document's schema `name`;
 * passes when it fits or the document cannot be read (the API then has the last word).
 */
export async function checkRequest(name: string, body: unknown): Promise<void> {
  const doc = await openApiDocument();
  const schema = doc?.components?.schemas?.[name];
  if (!doc || !schema) return;
  const issues = schemaIssues(doc, schema, body);
  if (issues.length > 0) {
    throw new ApiError(
      400,
      "INVALID_REQUEST",
      "Correct the fields below and try again (nothing was sent).",
      issues,
    );
  }
}
