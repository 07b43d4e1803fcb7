import { createHmac, hkdfSync } from "node:crypto";
import { openSealed, sealBytes, sha256Hex } from "@agentry/core";
import { AppError, httpStatusOf } from "@agentry/errors";
import { IdempotencyOutcome } from "@agentry/proto";
import type { Middleware, ParameterizedContext } from "koa";
import type { GatewayContext, GatewayState } from "../context.js";
import type { HandlerInput, Route } from "../routes/table.js";
import { readRawBody } from "./body.js";
import { errorEnvelope, toAppError } from "./errors.js";

type Context = ParameterizedContext<GatewayState>;

/** The request header (decisions.md, "Idempotency, background messages, resumable streams, fallbacks"). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** The response header that marks a replayed response. */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** 1 to 255 printable ASCII characters, as the OpenAPI document states it. */
export const IDEMPOTENCY_KEY_SCHEMA_PATTERN = "^[\\x20-\\x7E]+$";
const KEY_PATTERN = new RegExp(IDEMPOTENCY_KEY_SCHEMA_PATTERN);
const KEY_MAX_LENGTH = 255;
/** Beyond a request's own time limit, how long its claim on a key holds before the key is presumed lost. */
const LEASE_MARGIN_MS = 10_000;

/** What a route's handler needs to know of the key its request runs under. */
export interface IdempotentRequest {
  /** The SHA-256 of the key, which a create passes to the registry to complete the key with the resource. */
  keyHash: string;
  /** Takes each event a streamed response sends, so that a completed stream is replayed whole. */
  recordEvent(event: string, frame: string): void;
}

/** A response as it is kept under its key: sealed, so that only a holder of the key can read it. */
interface KeptResponse {
  contentType: string;
  body: string;
}

/**
 * Idempotency-Key on every POST, PATCH and DELETE. The first request with a key runs; the same request again
 * answers the first one's response with `Idempotent-Replayed: true`; another request with the key is 422
 * IDEMPOTENCY_KEY_REUSED; the same one while the first still runs is 409 IDEMPOTENCY_KEY_IN_USE. A response whose
 * status says the request may succeed when retried (409, 429, 5xx) is not kept: the key is released, so the retry
 * runs. A streamed reply is kept once it completed.
 */
export function idempotency(
  gateway: GatewayContext,
  route: Route,
  input: (ctx: Context) => HandlerInput,
): Middleware<GatewayState> | undefined {
  if (route.method === "GET") return undefined;
  const leaseMs =
    (route.concurrency ? gateway.config.MESSAGE_TIMEOUT_MS : gateway.config.RPC_TIMEOUT_MS) + LEASE_MARGIN_MS;

  return async (ctx, next) => {
    if (ctx.headers["idempotency-key"] === undefined) return next();
    const key = ctx.get(IDEMPOTENCY_HEADER);
    if (key.length > KEY_MAX_LENGTH || !KEY_PATTERN.test(key)) {
      throw new AppError(
        "INVALID_REQUEST",
        `${IDEMPOTENCY_HEADER} must be 1 to 255 printable ASCII characters.`,
        {
          details: [{ field: IDEMPOTENCY_HEADER, issue: "must be 1 to 255 printable ASCII characters" }],
        },
      );
    }
    const handlerInput = input(ctx);
    const { principal, rpc } = handlerInput;
    const keyHash = sha256Hex(key);
    const begun = await gateway.idempotency.beginRequest(
      {
        accountId: principal.accountId,
        keyHash,
        fingerprint: await fingerprint(ctx, key),
        leaseMs: BigInt(leaseMs),
      },
      rpc,
    );
    switch (begun.outcome) {
      case IdempotencyOutcome.STORED:
        return replay(handlerInput, route, begun.response!, sealingKey(key, principal.accountId));
      case IdempotencyOutcome.IN_USE:
        throw new AppError(
          "IDEMPOTENCY_KEY_IN_USE",
          `A request with this ${IDEMPOTENCY_HEADER} is still running; retry once it has finished.`,
          { retryAfterSeconds: 1 },
        );
      case IdempotencyOutcome.REUSED:
        throw new AppError(
          "IDEMPOTENCY_KEY_REUSED",
          `This ${IDEMPOTENCY_HEADER} was used with a different request (method, path or body); use a new key for a new request.`,
        );
      case IdempotencyOutcome.STARTED:
        break;
      default:
        throw new AppError("INTERNAL_ERROR", "Unknown idempotency outcome.");
    }

    const events: string[] = [];
    let completedStream = false;
    ctx.state.idempotency = {
      keyHash,
      recordEvent(event, frame) {
        events.push(frame);
        if (event === "message.completed") completedStream = true;
      },
    };
    let kept: { status: number; response: KeptResponse } | null = null;
    try {
      await next();
      if (ctx.respond === false) {
        if (completedStream) {
          kept = {
            status: 200,
            response: { contentType: "text/event-stream; charset=utf-8", body: events.join("") },
          };
        }
      } else {
        kept = {
          status: ctx.status,
          response: { contentType: String(ctx.type || "application/json"), body: bodyText(ctx.body) },
        };
      }
    } catch (thrown) {
      const error = toAppError(thrown);
      kept = {
        status: httpStatusOf(error.code),
        response: {
          contentType: "application/json",
          body: JSON.stringify(errorEnvelope(error, ctx.state.requestId)),
        },
      };
      throw error;
    } finally {
      await settle(
        gateway,
        principal.accountId,
        keyHash,
        kept,
        () => sealingKey(key, principal.accountId),
        rpc,
      );
    }
  };
}

/** Whether a response is the final answer to its request, to be replayed, or one a retry may change. */
function keeps(status: number): boolean {
  return status < 500 && status !== 409 && status !== 429;
}

async function settle(
  gateway: GatewayContext,
  accountId: string,
  keyHash: string,
  kept: { status: number; response: KeptResponse } | null,
  sealing: () => Buffer,
  rpc: HandlerInput["rpc"],
): Promise<void> {
  try {
    if (kept && keeps(kept.status)) {
      await gateway.idempotency.completeRequest(
        { accountId, keyHash, status: kept.status, sealed: seal(kept.response, sealing()) },
        rpc,
      );
    } else {
      await gateway.idempotency.releaseRequest({ accountId, keyHash }, rpc);
    }
  } catch (error) {
    // The claim runs out on its own; until then a retry is told the key is in use.
    gateway.logger.warn({ err: error }, "could not record the outcome of an idempotent request");
  }
}

async function replay(
  input: HandlerInput,
  route: Route,
  stored: { status: number; sealed: Uint8Array; resourceId: string },
  sealing: Buffer,
): Promise<void> {
  const { ctx } = input;
  ctx.set(REPLAYED_HEADER, "true");
  if (stored.sealed.length > 0) {
    const kept = unseal(stored.sealed, sealing);
    ctx.status = stored.status;
    ctx.type = kept.contentType;
    ctx.body = kept.body;
    return;
  }
  // The create committed, and its process stopped before it kept the response: the resource as it is now.
  if (!route.replayCreated || stored.resourceId === "") {
    throw new AppError("INTERNAL_ERROR", "A stored idempotent response has no content.");
  }
  await route.replayCreated(input, stored.resourceId);
}

/**
 * What makes two requests the same one: method, path with query, and body, exactly as sent. Keyed with the
 * Idempotency-Key, which the registry never sees, so that what it stores says nothing of a body (an agent
 * secret's value, say) that could be found by hashing guesses.
 */
async function fingerprint(ctx: Context, key: string): Promise<string> {
  const hash = createHmac("sha256", key).update(`${ctx.method} ${ctx.url}\n`);
  if (ctx.method !== "DELETE" && ctx.is("application/json")) hash.update(await readRawBody(ctx));
  return hash.digest("hex");
}

function bodyText(body: unknown): string {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body;
  if (Buffer.isBuffer(body)) return body.toString("utf-8");
  return JSON.stringify(body);
}

/**
 * The key a response is sealed with: derived from the Idempotency-Key itself, which the registry never sees (it
 * keeps the key's SHA-256), so a stored response, the secret of a new API key among them, cannot be read from the
 * database alone.
 */
function sealingKey(key: string, accountId: string): Buffer {
  return Buffer.from(hkdfSync("sha256", key, accountId, "agentry idempotent response", 32));
}

// Stored as nonce (12 bytes), tag (16 bytes), ciphertext.
const IV_BYTES = 12;
const TAG_BYTES = 16;

function seal(response: KeptResponse, key: Buffer): Uint8Array {
  const { iv, tag, ciphertext } = sealBytes(key, JSON.stringify(response));
  return Buffer.concat([iv, tag, ciphertext]);
}

function unseal(sealed: Uint8Array, key: Buffer): KeptResponse {
  const bytes = Buffer.from(sealed);
  const plain = openSealed(key, {
    iv: bytes.subarray(0, IV_BYTES),
    tag: bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES),
    ciphertext: bytes.subarray(IV_BYTES + TAG_BYTES),
  });
  return JSON.parse(plain.toString("utf-8")) as KeptResponse;
}
