import type { OutboundClient } from "@agentry/outbound";
import { OutboundRefusedError } from "@agentry/outbound";
import type { AttemptOutcome } from "../domain/schedule.js";
import { type SignedHeaders, signDelivery } from "../domain/signing.js";
import { RESPONSE_BODY_KEPT_BYTES } from "../store/sqlite.js";

/** How long an attempt may take, from connecting to the end of the answer's head (docs/api/webhooks.md, "Retries"). */
export const ATTEMPT_TIMEOUT_MS = 10_000;

const USER_AGENT = "Agentry-Webhooks/1";

export interface Attempt {
  url: string;
  eventId: string;
  body: string;
  /** The secrets to sign with, already opened. */
  secrets: string[];
}

/**
 * Makes one attempt: signs the body, POSTs it through the outbound guard (which refuses a destination that is
 * not public as the connection is made, and never follows a redirect), and reads at most the first KiB of the
 * answer. Never throws: every way an attempt can go is an outcome.
 */
export async function sendAttempt(
  outbound: OutboundClient,
  attempt: Attempt,
  timeoutMs: number = ATTEMPT_TIMEOUT_MS,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const signal = AbortSignal.timeout(timeoutMs);
  let headers: SignedHeaders;
  try {
    if (attempt.secrets.length === 0) throw new Error("no secret");
    headers = signDelivery(attempt.eventId, attempt.body, attempt.secrets);
  } catch {
    // Nothing is sent unsigned: the receiver would only refuse it.
    return { kind: "unanswered", error: "the endpoint's secret could not be read", durationMs: elapsed() };
  }
  try {
    const response = await outbound.request(attempt.url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": USER_AGENT, ...headers },
      body: attempt.body,
      signal,
    });
    const body = await readSome(response.body, RESPONSE_BODY_KEPT_BYTES).catch(() => new Uint8Array());
    return { kind: "answered", status: response.statusCode, durationMs: elapsed(), body };
  } catch (error) {
    return { kind: "unanswered", error: describeFailure(error, signal, timeoutMs), durationMs: elapsed() };
  }
}

/** The first `limit` bytes of a body; the rest is never read (the connection is dropped instead). */
async function readSome(body: AsyncIterable<Uint8Array> & { destroy(): void }, limit: number) {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size >= limit) break;
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

/** What the delivery log says of an attempt without an answer: safe to show, never a secret or an address list. */
function describeFailure(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs / 1000} s`;
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundRefusedError) return `refused: the URL ${cause.reason}`;
  }
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case "ECONNREFUSED":
      return "the connection was refused";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "the connection was closed before an answer";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host could not be resolved";
    case "UND_ERR_CONNECT_TIMEOUT":
      return "the connection could not be made in time";
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return `no answer within ${timeoutMs / 1000} s`;
    default:
      return error instanceof Error && /certificate|TLS|SSL/i.test(error.message)
        ? "the TLS connection failed (certificate or protocol)"
        : "the request failed before an answer";
  }
}
