import { AppError, type ErrorCode } from "@agentry/errors";
import type { ProviderName } from "./types.js";

/**
 * Whether a failure with this code will not fix itself, so the agent should be put in `error` (docs/api/agents.md,
 * "Lifecycle"): MODEL_ERROR is lasting (rejected credentials, unknown model, invalid request, no
 * provider configured); AGENT_UNAVAILABLE is transient (timeouts, unreachable, rate-limited, overloaded).
 */
export function isLastingFailure(code: ErrorCode): boolean {
  return code === "MODEL_ERROR";
}

/** The environment variables that configure each provider, named in messages that tell how to fix a failure. */
export const PROVIDER_ENV: Record<Exclude<ProviderName, "local">, { apiKey: string; baseUrl: string }> = {
  openai: { apiKey: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" },
  anthropic: { apiKey: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL" },
};

/** Response headers as Node and undici give them: lower-case names, repeated ones as arrays. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/** What a provider answered when it refused a call. */
export interface UpstreamRefusal {
  /** HTTP status; unset for an error reported inside a stream that had already started. */
  status: number | undefined;
  headers: UpstreamHeaders | undefined;
  /** The provider's error type, e.g. `overloaded_error` or `invalid_request_error`. */
  type: string | undefined;
  /** The provider's error message; shown only sanitised, and only for invalid requests. */
  message: string | undefined;
}

const TRANSIENT_TYPES = new Set([
  "overloaded_error",
  "api_error",
  "rate_limit_error",
  "timeout_error",
  "server_error",
  "rate_limit_exceeded",
]);

/**
 * The public error for a provider's refusal (docs/api/providers.md, "Provider failures"): rejected credentials (401/403), unknown model (404)
 * and invalid requests (400/422 and other 4xx) are MODEL_ERROR; timeouts (408), conflicts (409), rate limits
 * (429) and server failures (5xx, Anthropic's 529 overloaded) are AGENT_UNAVAILABLE with the provider's
 * `retry-after` when it sent one. Messages name the provider and the status, never the key or the raw body.
 */
export function refusalError(
  provider: ProviderName,
  model: string,
  refusal: UpstreamRefusal,
  secrets: readonly string[] = [],
): AppError {
  const { status, headers } = refusal;
  const env = provider === "local" ? undefined : PROVIDER_ENV[provider];
  const retryAfter = headers ? retryAfterSeconds(headers) : undefined;
  const transient = (message: string) =>
    new AppError(
      "AGENT_UNAVAILABLE",
      message,
      retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter },
    );
  const lasting = (message: string) => new AppError("MODEL_ERROR", message);

  if (status === undefined) {
    if (refusal.type === undefined || TRANSIENT_TYPES.has(refusal.type)) {
      return transient(`The ${provider} provider failed while answering. Retry shortly.`);
    }
    return lasting(`The ${provider} provider rejected the request (${safeWord(refusal.type)}).`);
  }
  if (status === 401) {
    return lasting(
      `The ${provider} provider rejected the credentials (HTTP 401).${env ? ` Check ${env.apiKey}.` : ""}`,
    );
  }
  if (status === 403) {
    return lasting(
      `The ${provider} provider refused access (HTTP 403): the credentials are not allowed to use the model "${model}".`,
    );
  }
  if (status === 404) {
    return lasting(
      `The ${provider} provider does not know the model "${model}" (HTTP 404). Check the agent's model` +
        (env ? ` and ${env.baseUrl}.` : "."),
    );
  }
  if (status === 408) return transient(`The ${provider} provider timed out (HTTP 408). Retry shortly.`);
  if (status === 409)
    return transient(`The ${provider} provider could not take the request (HTTP 409). Retry.`);
  if (status === 429) {
    return transient(`The ${provider} provider is rate-limiting requests (HTTP 429). Retry later.`);
  }
  if (status === 503 || status === 529) {
    return transient(`The ${provider} provider is overloaded (HTTP ${status}). Retry shortly.`);
  }
  if (status >= 500) return transient(`The ${provider} provider failed (HTTP ${status}). Retry shortly.`);
  const detail = refusal.message ? sanitise(refusal.message, secrets) : "";
  return lasting(
    `The ${provider} provider rejected the request as invalid (HTTP ${status})${detail ? `: ${detail}` : "."}`,
  );
}

/** The provider could not be reached, or the connection broke before an answer came. */
export function connectionError(provider: ProviderName, cause: unknown): AppError {
  return new AppError("AGENT_UNAVAILABLE", `The ${provider} provider could not be reached. Retry shortly.`, {
    cause,
  });
}

/** The connection ended before the reply was complete: a cut stream stores nothing and is retried whole. */
export function incompleteError(provider: ProviderName, cause?: unknown): AppError {
  return new AppError(
    "AGENT_UNAVAILABLE",
    `The connection to the ${provider} provider ended before the reply was complete. Retry shortly.`,
    { cause },
  );
}

/**
 * Seconds to wait, from `retry-after-ms` (OpenAI), `retry-after` in seconds, or `retry-after` as an HTTP date.
 * Rounded up, so a client never retries too early.
 */
export function retryAfterSeconds(headers: UpstreamHeaders, now: number = Date.now()): number | undefined {
  const ms = Number(header(headers, "retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms / 1000);
  const value = header(headers, "retry-after")?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  // An HTTP date names its weekday and month; Date.parse would also take "-3" as a year.
  const date = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isFinite(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  return undefined;
}

function header(headers: UpstreamHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const MAX_DETAIL = 300;

/**
 * A provider's message about an invalid request helps the agent's owner fix its settings, but must not carry
 * credentials: configured secrets and anything shaped like an API key or bearer token are masked.
 */
export function sanitise(message: string, secrets: readonly string[] = []): string {
  let text = message;
  for (const secret of secrets) if (secret) text = text.split(secret).join("[redacted]");
  text = text
    .replace(/\b(sk|pk|rk|key|sess)-[A-Za-z0-9_*.-]{6,}/g, "[redacted]")
    .replace(/\bBearer\s+\S+/gi, "Bearer [redacted]")
    .replace(/[A-Za-z0-9_\-+/=]{40,}/g, "[redacted]")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
}

function safeWord(value: string): string {
  return /^[a-z_]{1,64}$/.test(value) ? value : "error";
}
