import { createHmac } from "node:crypto";
import { openPacked, sealPacked, sha256Hex } from "@agentry/core";
import {
  AppError,
  type ErrorCode,
  httpStatusOf,
  idempotencyKeyInUse,
  idempotencyKeyReused,
} from "@agentry/errors";
import { type CreateIdempotencySchema, IdempotencyOutcome, type StoredResponse } from "@agentry/proto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Middleware, ParameterizedContext } from "koa";
import type { GatewayContext, GatewayState } from "../context.js";
import type { RequestContext, ServedRoute } from "../routes/define.js";
import { readRawBody } from "./body.js";
import { errorEnvelope, toAppError } from "./errors.js";
import { uploadIdentity } from "./upload.js";

type Context = ParameterizedContext<GatewayState>;

/** The request header (docs/api/messages-and-streams.md, "Idempotency"). */
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
  /** The SHA-256 of the key, which a message passes to the conversation service to keep its exchange with. */
  keyHash: string;
  /** Takes each event a streamed response sends, so that a completed stream is replayed whole. */
  recordEvent(event: string, frame: string): void;
  /** For a route that claims its key in its create (`Route.claimsKeyInCreate`): what the create is given. */
  create?: MessageInitShape<typeof CreateIdempotencySchema>;
  /** What a secret kept under the key is sealed with (`CreateIdempotency.sealing_key`). */
  sealing(): Buffer;
  /** Set by `createdUnderKey` once the create has answered: whether it answered the key's earlier create. */
  created?: { replayed: boolean };
}

/** A response as it is kept under its key: sealed, so that only a holder of the key can read it. */
interface KeptResponse {
  contentType: string;
  body: string;
}

/** An answer to keep under a key: the response's status and content. */
type Outcome = { status: number; response: KeptResponse } | null;

/**
 * Idempotency-Key on every POST, PATCH and DELETE. The first request with a key runs; the same request again
 * answers the first one's response with `Idempotent-Replayed: true`; another request with the key is 422
 * IDEMPOTENCY_KEY_REUSED; the same one while the first still runs is 409 IDEMPOTENCY_KEY_IN_USE. A response whose
 * status says the request may succeed when retried (402, 409, 429, 5xx) is not kept: the key is released, so the
 * retry runs. A streamed reply is kept once it completed.
 *
 * Most routes claim the key before their handler runs and keep its response after (IdempotencyService). An agent
 * or API key create claims it in the create's own transaction instead (`Route.claimsKeyInCreate`), which keeps the
 * new resource's id and creation time with it (and a new API key's secret, sealed): a retry, the same request, is
 * answered with what was created, as it was, and a create under a key costs no more transactions than one without.
 */
export function idempotency(
  gateway: GatewayContext,
  route: ServedRoute,
  input: (ctx: Context) => RequestContext,
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
    const keyed: KeyedRequest = {
      gateway,
      route,
      input: handlerInput,
      keyHash: sha256Hex(key),
      fingerprint: await fingerprint(ctx, key),
      sealing: () => sealingKey(key, handlerInput.principal.accountId),
      leaseMs: BigInt(leaseMs),
    };
    return route.claimsKeyInCreate ? claimInCreate(keyed, next) : claimAround(keyed, next);
  };
}

/** A request with a valid Idempotency-Key, as the two ways of claiming it need it. */
interface KeyedRequest {
  gateway: GatewayContext;
  route: ServedRoute;
  input: RequestContext;
  keyHash: string;
  fingerprint: string;
  /** What a response kept under the key is sealed with (`sealingKey`), derived only when one is. */
  sealing(): Buffer;
  leaseMs: bigint;
}

/**
 * Claims the key for the request (IdempotencyService.BeginRequest): null once it is the request's, the key's
 * answer when it has one; a key used by another request, or by one still running, is refused.
 */
async function claim({ gateway, input, keyHash, fingerprint, leaseMs }: KeyedRequest) {
  const begun = await gateway.idempotency.beginRequest(
    { accountId: input.principal.accountId, keyHash, fingerprint, leaseMs },
    input.rpc,
  );
  switch (begun.outcome) {
    case IdempotencyOutcome.STARTED:
      return null;
    case IdempotencyOutcome.STORED:
      return begun.response!;
    case IdempotencyOutcome.IN_USE:
      throw idempotencyKeyInUse();
    case IdempotencyOutcome.REUSED:
      throw idempotencyKeyReused();
    default:
      throw new AppError("INTERNAL_ERROR", "Unknown idempotency outcome.");
  }
}

/** Claims the key before the handler runs, and keeps the handler's answer under it after. */
async function claimAround(keyed: KeyedRequest, next: () => Promise<unknown>): Promise<void> {
  const { ctx } = keyed.input;
  const earlier = await claim(keyed);
  if (earlier) return replay(ctx, earlier, keyed.sealing());

  const events: string[] = [];
  let completedStream = false;
  ctx.state.idempotency = {
    keyHash: keyed.keyHash,
    sealing: keyed.sealing,
    recordEvent(event, frame) {
      events.push(frame);
      if (event === "message.completed") completedStream = true;
    },
  };
  let outcome: Outcome = null;
  try {
    await next();
    if (ctx.respond === false) {
      if (completedStream) {
        outcome = {
          status: 200,
          response: { contentType: "text/event-stream; charset=utf-8", body: events.join("") },
        };
      }
    } else {
      outcome = answered(ctx);
    }
  } catch (thrown) {
    const error = toAppError(thrown);
    outcome = failed(error, ctx, keyed.route);
    throw error;
  } finally {
    await settle(keyed, outcome);
  }
}

/**
 * Runs the handler with the key for its create to claim (`createdUnderKey`). An answer given without the create
 * having run (a refusal before it, a dry run) claims the key afterwards, and is kept under it as `claimAround`
 * keeps one, unless the key has an answer already: that one is given instead, as it would have been before.
 */
async function claimInCreate(keyed: KeyedRequest, next: () => Promise<unknown>): Promise<void> {
  const { ctx } = keyed.input;
  const state: IdempotentRequest = {
    keyHash: keyed.keyHash,
    recordEvent: () => {},
    create: { keyHash: keyed.keyHash, fingerprint: keyed.fingerprint },
    sealing: keyed.sealing,
  };
  ctx.state.idempotency = state;
  let outcome: Outcome;
  let error: AppError | undefined;
  try {
    await next();
    if (state.created) {
      if (state.created.replayed) ctx.set(REPLAYED_HEADER, "true");
      return;
    }
    outcome = answered(ctx);
  } catch (thrown) {
    if (thrown instanceof KeptAnswer) return replay(ctx, thrown.stored, keyed.sealing());
    error = toAppError(thrown);
    if (state.created || KEY_REFUSALS.has(error.code)) throw error;
    outcome = failed(error, ctx, keyed.route);
  }
  const earlier = await claimAfterwards(keyed, outcome);
  if (earlier) return replay(ctx, earlier, keyed.sealing());
  if (error) throw error;
}

const KEY_REFUSALS = new Set<ErrorCode>(["IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED"]);

/**
 * Claims the key for an answer already given, and keeps the answer under it. The key's own answer, when it has
 * one, is returned to be given instead; a key used by another request, or by one still running, is refused as
 * `claimAround` refuses it. An answer a retry may change (`keeps`) leaves the key alone.
 */
async function claimAfterwards(keyed: KeyedRequest, outcome: Outcome): Promise<StoredResponse | null> {
  if (!outcome || !keeps(outcome.status)) return null;
  let earlier: StoredResponse | null;
  try {
    earlier = await claim(keyed);
  } catch (thrown) {
    if (thrown instanceof AppError && KEY_REFUSALS.has(thrown.code)) throw thrown;
    keyed.gateway.logger.warn({ err: thrown }, "could not keep the answer of an idempotent request");
    return null;
  }
  if (!earlier) await settle(keyed, outcome);
  // The key's create made its agent, and this same request was refused before it got that far (the providers or
  // plugins the deployment serves changed since): the refusal is answered as it is, and nothing more is kept.
  if (earlier && earlier.sealed.length === 0) return null;
  return earlier;
}

/**
 * What a create under a key answers (CreateAgent or CreateApiKey given `IdempotentRequest.create`): the new
 * resource, or the one the key's request created, as it was created, the response then marked replayed. Another
 * answer kept under the key (a refusal of the same request) is answered again in place of the handler's.
 */
export function createdUnderKey<R extends CreatedUnderKey>(ctx: Context, response: R): R {
  const state = ctx.state.idempotency;
  if (response.storedResponse) throw new KeptAnswer(response.storedResponse);
  // A registry of an earlier release creates without the claim: the answer is then kept as one given without it.
  if (state && response.keyClaimed) state.created = { replayed: response.replayed };
  return response;
}

/** What the creates that claim an Idempotency-Key answer besides what they made. */
interface CreatedUnderKey {
  replayed: boolean;
  storedResponse?: StoredResponse;
  keyClaimed: boolean;
}

/** Carries a kept answer from a create up to the middleware, past the rest of the handler. */
class KeptAnswer {
  constructor(readonly stored: StoredResponse) {}
}

/** The handler's response as it would be kept. */
function answered(ctx: Context): Outcome {
  return {
    status: ctx.status,
    response: { contentType: String(ctx.type || "application/json"), body: bodyText(ctx.body) },
  };
}

/** An error's response as it would be kept: as the route answers it, in its own shape. */
function failed(error: AppError, ctx: Context, route: ServedRoute): Outcome {
  const body = route.errorBody ? route.errorBody(error) : errorEnvelope(error, ctx.state.requestId);
  return {
    status: httpStatusOf(error.code),
    response: { contentType: "application/json", body: JSON.stringify(body) },
  };
}

/**
 * Whether a response is the final answer to its request, to be replayed, or one a retry may change: a spent
 * budget's 402 among them, which a new period or a raised limit lifts.
 */
function keeps(status: number): boolean {
  return status < 500 && status !== 402 && status !== 409 && status !== 429;
}

async function settle(keyed: KeyedRequest, outcome: Outcome): Promise<void> {
  const { gateway, input, keyHash } = keyed;
  const { accountId } = input.principal;
  try {
    if (outcome && keeps(outcome.status)) {
      await gateway.idempotency.completeRequest(
        { accountId, keyHash, status: outcome.status, sealed: seal(outcome.response, keyed.sealing()) },
        input.rpc,
      );
    } else {
      await gateway.idempotency.releaseRequest({ accountId, keyHash }, input.rpc);
    }
  } catch (error) {
    // The claim runs out on its own; until then a retry is told the key is in use.
    gateway.logger.warn({ err: error }, "could not record the outcome of an idempotent request");
  }
}

/** Answers the response kept under the key again. */
function replay(ctx: Context, stored: StoredResponse, sealing: Buffer): void {
  // Only a create kept by a gateway of an earlier release has no content; the registry answers those itself.
  if (stored.sealed.length === 0) {
    throw new AppError("INTERNAL_ERROR", "A stored idempotent response has no content.");
  }
  const kept = unseal(stored.sealed, sealing);
  ctx.set(REPLAYED_HEADER, "true");
  ctx.status = stored.status;
  ctx.type = kept.contentType;
  ctx.body = kept.body;
}

/**
 * What makes two requests the same one: method, path with query, and body, exactly as sent (a file upload: the
 * file and the form's fields, whatever its boundary). Keyed with the
 * Idempotency-Key, which the registry never sees, so that what it stores says nothing of a body (an agent
 * secret's value, say) that could be found by hashing guesses.
 */
async function fingerprint(ctx: Context, key: string): Promise<string> {
  const hash = createHmac("sha256", key).update(`${ctx.method} ${ctx.url}\n`);
  if (ctx.method !== "DELETE" && ctx.is("application/json")) hash.update(await readRawBody(ctx));
  else if (ctx.method !== "DELETE" && ctx.is("multipart/form-data")) hash.update(await uploadIdentity(ctx));
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
  // HKDF-SHA256 (RFC 5869) with the account as salt, for one block of output: the same key as
  // `hkdfSync("sha256", key, accountId, SEALING_INFO, 32)`, in two HMACs without its per-call key objects.
  const pseudorandom = createHmac("sha256", accountId).update(key).digest();
  return createHmac("sha256", pseudorandom).update(SEALING_INFO).update(FIRST_BLOCK).digest();
}

const SEALING_INFO = "agentry idempotent response";
const FIRST_BLOCK = Buffer.of(1);

function seal(response: KeptResponse, key: Buffer): Uint8Array {
  return sealPacked(key, JSON.stringify(response));
}

function unseal(sealed: Uint8Array, key: Buffer): KeptResponse {
  return JSON.parse(openPacked(key, sealed).toString("utf-8")) as KeptResponse;
}
