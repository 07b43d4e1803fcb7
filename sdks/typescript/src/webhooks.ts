import { AgentryError, WebhookVerificationError } from "./errors.js";
import type { WebhookEvent } from "./types.js";

/** How far a delivery's `webhook-timestamp` may be from the receiver's clock by default: 5 minutes. */
export const DEFAULT_WEBHOOK_TOLERANCE_MS = 5 * 60_000;

/** A delivery's body exactly as received: the raw text or bytes, never JSON parsed and serialized again. */
export type WebhookPayload = string | Uint8Array | ArrayBuffer;

/**
 * A delivery's headers: a `Headers` object (fetch, Web-standard servers) or a plain record such as Node's
 * `req.headers`. Names are matched case-insensitively.
 */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Settings of `verify` and `unwrap`. */
export interface WebhookVerifyOptions {
  /**
   * Milliseconds `webhook-timestamp` may be away from now, either way (default 5 minutes). Older deliveries
   * are refused as replays.
   */
  tolerance?: number | undefined;
  /** The clock, in milliseconds since the epoch like `Date.now` (its default); for tests. */
  now?: (() => number) | undefined;
}

/** Settings of `sign`. */
export interface WebhookSignOptions {
  /** The `webhook-id`: the event's id. */
  id: string;
  /** The `webhook-timestamp` (default: now). */
  timestamp?: Date | undefined;
}

/** The three headers of a signed delivery, as `sign` returns them. */
export interface WebhookSignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();

/**
 * Verification of the deliveries the service sends to webhook endpoints (the Standard Webhooks scheme:
 * HMAC-SHA256 over `id.timestamp.body`). It needs the endpoint's secret, not an API key: use the `webhooks`
 * export in a receiver, or `client.webhooks` where a client is at hand. Built on Web Crypto, so it runs in Node
 * 20+, browsers and edge runtimes alike.
 */
export class Webhooks {
  /**
   * Checks that a delivery was signed with `secret` and is recent, and throws `WebhookVerificationError` if
   * not. Of the signatures in `webhook-signature` (several while a secret is being rotated), one `v1`
   * signature matching is enough; other versions are ignored. Signatures are compared in constant time.
   *
   * ```ts
   * await webhooks.verify(rawBody, req.headers, process.env.AGENTRY_WEBHOOK_SECRET!);
   * ```
   *
   * @param payload the body exactly as received (text or bytes), not parsed JSON serialized again
   * @param secret the endpoint's secret, `whsec_...`, with or without the prefix
   * @throws {WebhookVerificationError} a header missing or malformed, no matching signature, or a timestamp
   *   outside the tolerance
   * @throws {AgentryError} the secret is not a `whsec_` secret
   */
  async verify(
    payload: WebhookPayload,
    headers: WebhookHeaders,
    secret: string,
    options: WebhookVerifyOptions = {},
  ): Promise<void> {
    const tolerance = options.tolerance ?? DEFAULT_WEBHOOK_TOLERANCE_MS;
    if (typeof tolerance !== "number" || !(tolerance >= 0)) {
      throw new AgentryError(`tolerance must be a number of milliseconds of at least 0; got ${tolerance}.`);
    }
    const key = await importKey(secret);
    const id = readHeader(headers, "webhook-id");
    const timestamp = readHeader(headers, "webhook-timestamp");
    const signatures = readHeader(headers, "webhook-signature");
    if (!id || !timestamp || !signatures) {
      const missing = [
        id ? undefined : "webhook-id",
        timestamp ? undefined : "webhook-timestamp",
        signatures ? undefined : "webhook-signature",
      ].filter((name) => name !== undefined);
      throw new WebhookVerificationError("missing_headers", `Missing webhook header: ${missing.join(", ")}.`);
    }
    checkTimestamp(timestamp, tolerance, (options.now ?? Date.now)());

    const signed = concat(encoder.encode(`${id}.${timestamp}.`), bytesOf(payload));
    let candidates = 0;
    for (const token of signatures.split(" ")) {
      // Headers joined by a proxy or by Node come as "v1,a, v1,b".
      const entry = token.replace(/,$/, "");
      const comma = entry.indexOf(",");
      if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
      const signature = fromBase64(entry.slice(comma + 1));
      if (signature === undefined) continue;
      candidates += 1;
      // The platform's HMAC verify compares in constant time.
      if (await crypto.subtle.verify("HMAC", key, signature, signed)) return;
    }
    if (candidates === 0) {
      throw new WebhookVerificationError(
        "no_signature",
        "The webhook-signature header holds no v1 signature.",
      );
    }
    throw new WebhookVerificationError(
      "signature_mismatch",
      "No webhook signature matches: check the secret, and verify the raw body as received.",
    );
  }

  /**
   * Verifies a delivery (as `verify` does) and returns its event, parsed. `type` tells the event apart and
   * narrows `data`:
   *
   * ```ts
   * const event = await webhooks.unwrap(rawBody, req.headers, secret);
   * if (event.type === "message.completed") console.log(event.data.text);
   * ```
   *
   * @throws {WebhookVerificationError} the delivery does not verify, or (`invalid_payload`) its body is not an
   *   event
   * @throws {AgentryError} the secret is not a `whsec_` secret
   */
  async unwrap(
    payload: WebhookPayload,
    headers: WebhookHeaders,
    secret: string,
    options: WebhookVerifyOptions = {},
  ): Promise<WebhookEvent> {
    await this.verify(payload, headers, secret, options);
    const text = typeof payload === "string" ? payload : new TextDecoder().decode(bytesOf(payload));
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      throw new WebhookVerificationError("invalid_payload", "The webhook body is not JSON.");
    }
    if (
      typeof event !== "object" ||
      event === null ||
      typeof (event as { id?: unknown }).id !== "string" ||
      typeof (event as { type?: unknown }).type !== "string"
    ) {
      throw new WebhookVerificationError("invalid_payload", "The webhook body is not an event.");
    }
    return event as WebhookEvent;
  }

  /**
   * Signs a payload as the service does and returns the headers of such a delivery: to test a receiver
   * without a running service.
   *
   * ```ts
   * const body = JSON.stringify({ id: "evt_1", type: "webhook.test", createdAt: new Date().toISOString(), data: {} });
   * const headers = await webhooks.sign(body, secret, { id: "evt_1" });
   * ```
   *
   * @throws {AgentryError} the secret is not a `whsec_` secret, or `id` is empty
   */
  async sign(
    payload: WebhookPayload,
    secret: string,
    options: WebhookSignOptions,
  ): Promise<WebhookSignedHeaders> {
    if (typeof options.id !== "string" || options.id === "") {
      throw new AgentryError("A webhook id is required to sign.");
    }
    const key = await importKey(secret);
    const timestamp = String(Math.floor((options.timestamp ?? new Date()).getTime() / 1000));
    const signed = concat(encoder.encode(`${options.id}.${timestamp}.`), bytesOf(payload));
    const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, signed));
    return {
      "webhook-id": options.id,
      "webhook-timestamp": timestamp,
      "webhook-signature": `v1,${toBase64(signature)}`,
    };
  }
}

/**
 * Webhook verification without a client (a receiver needs no API key):
 *
 * ```ts
 * import { webhooks } from "@agentry/sdk";
 * const event = await webhooks.unwrap(rawBody, req.headers, process.env.AGENTRY_WEBHOOK_SECRET!);
 * ```
 */
export const webhooks: Webhooks = new Webhooks();

async function importKey(secret: string): Promise<CryptoKey> {
  if (typeof secret !== "string") throw new AgentryError("The webhook secret must be a string.");
  const bytes = fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (bytes === undefined || bytes.length === 0) {
    throw new AgentryError("The webhook secret must be the endpoint's secret: whsec_ followed by base64.");
  }
  return await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

function readHeader(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    values.push(...(typeof value === "string" ? [value] : value));
  }
  return values.length > 0 ? values.join(" ").trim() : undefined;
}

function checkTimestamp(header: string, tolerance: number, nowMs: number): void {
  if (!/^\d{1,15}$/.test(header)) {
    throw new WebhookVerificationError(
      "invalid_timestamp",
      "webhook-timestamp is not a Unix time in seconds.",
    );
  }
  const age = nowMs - Number(header) * 1000;
  if (age > tolerance) {
    throw new WebhookVerificationError("timestamp_too_old", "The webhook timestamp is too old.");
  }
  if (age < -tolerance) {
    throw new WebhookVerificationError(
      "timestamp_too_new",
      "The webhook timestamp is too far in the future.",
    );
  }
}

function bytesOf(payload: WebhookPayload): Uint8Array {
  if (typeof payload === "string") return encoder.encode(payload);
  // Checked at run time too: JavaScript callers may pass anything.
  const value: unknown = payload;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new AgentryError(
    "The webhook payload must be the raw body: a string, a Uint8Array or an ArrayBuffer.",
  );
}

function concat(head: Uint8Array, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
