import { createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks signing (the symmetric `v1` scheme): `webhook-signature` holds `v1,` and the base64 of
 * HMAC-SHA256, keyed with the secret's bytes, of `<webhook-id>.<webhook-timestamp>.<body>`. Signing runs here on
 * node:crypto rather than through the `standardwebhooks` package: it is one HMAC call, the package computes
 * SHA-256 in JavaScript, and the tests verify every delivery with that package, which checks this code against
 * an implementation that is not its own.
 */

const SECRET_PREFIX = "whsec_";

/** Random bytes per secret: the scheme asks for 24 to 64. */
const SECRET_BYTES = 24;

/** The previous secret keeps signing for this long after a rotation. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 3_600_000;

/** A new secret, `whsec_` and the base64 of 24 random bytes. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("not a whsec_ secret");
  return Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
}

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * The headers of one attempt. Every secret given signs (the current one, and the previous one during its 24
 * hours), space-separated, so a receiver verifies with whichever it holds.
 */
export function signDelivery(
  eventId: string,
  body: string,
  secrets: readonly string[],
  at: Date = new Date(),
): SignedHeaders {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signed = `${eventId}.${timestamp}.${body}`;
  const signatures = secrets.map(
    (secret) => `v1,${createHmac("sha256", keyOf(secret)).update(signed).digest("base64")}`,
  );
  return { "webhook-id": eventId, "webhook-timestamp": timestamp, "webhook-signature": signatures.join(" ") };
}

/**
 * The body every attempt of an event carries: `{"id", "type", "createdAt", "data"}`. `data` is the JSON text as
 * published, put in as it is, so every attempt sends the same bytes whichever store kept it.
 */
export function deliveryBody(event: { id: string; type: string; createdAt: string; data: string }): string {
  return `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"createdAt":${JSON.stringify(event.createdAt)},"data":${event.data}}`;
}
