import { AppError } from "@agentry/errors";
import type { Context } from "koa";
import getRawBody from "raw-body";

/** The largest request body accepted (docs/api/agents.md, "Fields and bounds"). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Reads and parses a JSON request body: 415 unless it is `application/json`, 413 over 1 MiB (checked against
 * `Content-Length` first, then while reading), 400 when it is not valid JSON.
 */
export async function readJsonBody(ctx: Context): Promise<unknown> {
  if (!ctx.is("application/json")) {
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      "The request body must be JSON, sent with 'Content-Type: application/json'.",
    );
  }
  const text = await readRawBody(ctx);
  if (text.trim() === "")
    throw new AppError("INVALID_REQUEST", "The request body is empty; send a JSON object.");
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw new AppError("INVALID_REQUEST", "The request body is not valid JSON.");
  }
  const where = nulCharacterAt(body, "");
  if (where !== undefined) {
    const field = where || "body";
    throw new AppError(
      "INVALID_REQUEST",
      `Invalid request body: ${field} contains a NUL character (U+0000).`,
      {
        details: [{ field, issue: "must not contain the NUL character (U+0000)" }],
      },
    );
  }
  return body;
}

const RAW_BODY = Symbol("raw body");

/**
 * The request body as text, read once (413 over 1 MiB, checked against `Content-Length` first, then while
 * reading); reading it again answers the same text.
 */
export function readRawBody(ctx: Context): Promise<string> {
  const holder = ctx as Context & { [RAW_BODY]?: Promise<string> };
  holder[RAW_BODY] ??= readBodyText(ctx);
  return holder[RAW_BODY];
}

async function readBodyText(ctx: Context): Promise<string> {
  const declared = Number(ctx.get("content-length") || Number.NaN);
  if (declared > BODY_LIMIT_BYTES) throw tooLarge();
  try {
    return await getRawBody(ctx.req, { limit: BODY_LIMIT_BYTES, encoding: "utf-8" });
  } catch (error) {
    if ((error as { type?: string }).type === "entity.too.large") throw tooLarge();
    throw new AppError("INVALID_REQUEST", "The request body could not be read.", { cause: error });
  }
}

/**
 * The rule `nulCharacterAt` enforces, as the JSON Schema pattern the OpenAPI document gives every string (and
 * object key) of a request body.
 */
export const NUL_FREE_PATTERN = "^[^\\u0000]*$";

/**
 * The path of the first string (or object key) holding U+0000, which no store can keep as text; undefined when
 * there is none. Refused here so that every store accepts exactly the same input.
 */
function nulCharacterAt(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulCharacterAt(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (key.includes("\u0000")) return at;
      const found = nulCharacterAt(item, at);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function tooLarge(): AppError {
  return new AppError("PAYLOAD_TOO_LARGE", `The request body is larger than ${BODY_LIMIT_BYTES} bytes.`);
}
