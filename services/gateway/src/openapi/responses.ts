import { LIMIT_NAMES } from "@agentry/core";
import { type ErrorCode, httpStatusOf } from "@agentry/errors";
import { BODY_LIMIT_BYTES } from "../http/body.js";
import { type JsonSchema, schemaRef } from "./convert.js";

/** Whether the `X-RateLimit-*` headers accompany a response: the limiter runs after authentication. */
type Metered = "always" | "sometimes" | "never";

interface CodeDoc {
  when: string;
  metered: Metered;
}

/** When each error code is answered (docs/api/errors-and-status-codes.md, "Status codes per error code"). */
export const ERROR_CODE_DOCS: Record<ErrorCode, CodeDoc> = {
  INVALID_REQUEST: {
    when: "Bad JSON, wrong types, unknown fields, bad query values, `status` on create, `error` on update, a model provider or model this deployment does not serve, a webhook URL the service may not call, a test or redelivery to a disabled webhook endpoint. `details` names each field problem.",
    metered: "always",
  },
  UNAUTHORIZED: {
    when: "The API key is missing, malformed, unknown, revoked or expired.",
    metered: "never",
  },
  BUDGET_EXCEEDED: {
    when: "A spend budget of the account, the agent or the key does not allow this message; `error.budget` names it, with its limit, spend and `resetsAt`. Retrying before then will not help.",
    metered: "always",
  },
  FORBIDDEN: {
    when: "The API key, or the role of the console session's member, lacks the scope this operation needs (or, creating a key, a scope it would grant).",
    metered: "sometimes",
  },
  INSUFFICIENT_QUOTA: {
    when: "The account already holds its maximum number of agents, or of webhook endpoints; retrying will not help.",
    metered: "always",
  },
  AGENT_NOT_FOUND: {
    when: "No such agent in the caller's account (another account's agent is indistinguishable from none).",
    metered: "always",
  },
  CONVERSATION_NOT_FOUND: {
    when: "No such conversation of the agent in the caller's account.",
    metered: "always",
  },
  MESSAGE_NOT_FOUND: { when: "No such message of the agent in the caller's account.", metered: "always" },
  STREAM_NOT_FOUND: {
    when: "No such stream of the agent in the caller's account, or its events have expired.",
    metered: "always",
  },
  WEBHOOK_NOT_FOUND: { when: "No such webhook endpoint in the caller's account.", metered: "always" },
  DELIVERY_NOT_FOUND: { when: "No such delivery of the endpoint.", metered: "always" },
  SECRET_NOT_FOUND: { when: "No such secret of the agent.", metered: "always" },
  API_KEY_NOT_FOUND: { when: "No such API key in the caller's account.", metered: "always" },
  MEMORY_NOT_FOUND: { when: "No such memory of the agent.", metered: "always" },
  DOCUMENT_NOT_FOUND: { when: "No such document of the agent.", metered: "always" },
  SCHEDULE_NOT_FOUND: { when: "No such schedule of the agent.", metered: "always" },
  MEMBER_NOT_FOUND: { when: "No such member of the caller's account.", metered: "always" },
  BUDGET_NOT_FOUND: { when: "No such budget in the caller's account.", metered: "always" },
  NOT_FOUND: { when: "No such resource.", metered: "always" },
  METHOD_NOT_ALLOWED: {
    when: "The path exists but not with this method; `Allow` lists the methods it has.",
    metered: "never",
  },
  AGENT_INACTIVE: {
    when: "The agent's status is `inactive`; set it to `active` to send it messages.",
    metered: "always",
  },
  CONVERSATION_BUSY: {
    when: 'The message was sent with `onConflict: "reject"` (or the agent\'s `settings.concurrentMessages` is `reject`) while its conversation has a message in progress; send it again once that one has ended, or with `onConflict` `enqueue` or `interrupt`.',
    metered: "always",
  },
  MESSAGE_NOT_AWAITING_APPROVAL: {
    when: "The message is not waiting for a tool approval: it is being generated, has ended, or was answered meanwhile.",
    metered: "always",
  },
  APPROVAL_EXPIRED: {
    when: "A message's tool calls waited for approval longer than `TOOL_APPROVAL_TIMEOUT`; only a failed message's `error` carries it.",
    metered: "never",
  },
  MEMBER_EXISTS: {
    when: "The account already has a member with this email; change that member instead.",
    metered: "always",
  },
  LAST_OWNER: {
    when: "The change or removal would leave the account without an owner; make another member an owner first.",
    metered: "always",
  },
  IDEMPOTENCY_KEY_IN_USE: {
    when: "A request with this `Idempotency-Key` is still running; retry after `Retry-After` seconds.",
    metered: "always",
  },
  IDEMPOTENCY_KEY_REUSED: {
    when: "This `Idempotency-Key` was used with a different request.",
    metered: "always",
  },
  PRECONDITION_FAILED: {
    when: "The agent changed since the version named in `If-Match`; read it again (`GET /v1/agents/{agentId}`, its `ETag`) and decide whether to repeat the change.",
    metered: "always",
  },
  PAYLOAD_TOO_LARGE: {
    when: `The body is larger than ${BODY_LIMIT_BYTES.toLocaleString("en-US")} bytes (1 MiB).`,
    metered: "always",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    when: "The body is not sent as `Content-Type: application/json`.",
    metered: "always",
  },
  RATE_LIMIT_EXCEEDED: {
    when: "A rate or concurrency limit is reached; retry after `Retry-After` seconds.",
    metered: "always",
  },
  INTERNAL_ERROR: { when: "A fault of the service; it is logged with the request id.", metered: "sometimes" },
  MODEL_ERROR: {
    when: "The model provider rejected the call (credentials, unknown model, invalid request) or failed. A lasting failure puts the agent in `error`.",
    metered: "always",
  },
  AGENT_UNAVAILABLE: {
    when: "The model provider or an internal service is unreachable, timed out, rate-limited or overloaded, or the service is shutting down; `Retry-After` when known.",
    metered: "sometimes",
  },
};

const RATE_LIMIT_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "X-RateLimit-Bucket",
] as const;

/** The limits a request spends from per minute, any of which the rate-limit headers may report. */
const RATE_BUCKETS = LIMIT_NAMES.filter((name) => name.endsWith("PerMinute"));

const integerHeader = (description: string, required: boolean) => ({
  description,
  required,
  schema: { type: "integer", minimum: 0 },
});

const METERED_NOTE =
  "Present once the caller is authenticated and its limits were checked (not on 401, nor on a 403 for a missing scope).";

function headerDocs(required: boolean): Record<string, object> {
  const note = required ? "" : ` ${METERED_NOTE}`;
  return {
    "X-RateLimit-Limit": integerHeader(
      `Requests allowed per minute by the limit with the least remaining: the account's tier limit, the endpoint's, or for messages the agent's.${note}`,
      required,
    ),
    "X-RateLimit-Remaining": integerHeader(`Requests left in that limit's current window.${note}`, required),
    "X-RateLimit-Reset": integerHeader(
      `Unix epoch seconds at which that limit is full again.${note}`,
      required,
    ),
    "X-RateLimit-Bucket": {
      description: `The name of that limit, as the account's limits name it (\`requestsPerMinute\` is the account's tier limit).${note}`,
      required,
      schema: { type: "string", enum: RATE_BUCKETS },
    },
  };
}

/** Reusable headers: the required variants by their own names, the others with an `Optional` suffix. */
export function headerComponents(): Record<string, object> {
  const required = headerDocs(true);
  const optional = headerDocs(false);
  const components: Record<string, object> = {
    "X-Request-Id": {
      description:
        "The request's id. A caller's own `X-Request-Id` is reused when it matches `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`; otherwise the service makes one (`req_…`). Error bodies repeat it; logs carry it.",
      required: true,
      schema: { type: "string" },
    },
    "Retry-After": integerHeader("Seconds to wait before retrying.", true),
    "Idempotent-Replayed": {
      description:
        "`true` when the response is the stored answer to an earlier request with the same `Idempotency-Key`, which did not run again.",
      required: false,
      schema: { type: "string", enum: ["true"] },
    },
    "Retry-AfterOptional": integerHeader("Seconds to wait before retrying, when the service knows.", false),
  };
  for (const name of RATE_LIMIT_HEADERS) {
    components[name] = required[name]!;
    components[`${name}Optional`] = optional[name]!;
  }
  return components;
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The headers of a response: always `X-Request-Id`; the rate-limit headers as `metered` says. */
export function responseHeaders(
  metered: Metered,
  retryAfter?: "required" | "optional",
): Record<string, object> {
  const headers: Record<string, object> = { "X-Request-Id": headerRef("X-Request-Id") };
  if (metered !== "never") {
    for (const name of RATE_LIMIT_HEADERS)
      headers[name] = headerRef(metered === "always" ? name : `${name}Optional`);
  }
  if (retryAfter)
    headers["Retry-After"] = headerRef(retryAfter === "required" ? "Retry-After" : "Retry-AfterOptional");
  return headers;
}

/** `RATE_LIMIT_EXCEEDED` → `RateLimitExceeded`. */
function pascal(code: string): string {
  return code
    .toLowerCase()
    .split("_")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");
}

/** The name of the reusable response for a set of codes sharing one status, e.g. `ForbiddenOrInsufficientQuota`. */
export function errorResponseName(codes: readonly ErrorCode[]): string {
  return codes.map(pascal).join("Or");
}

/** One error response: the envelope, the codes it can carry (`x-error-codes`), and its headers. */
export function errorResponse(codes: readonly ErrorCode[], metered?: Metered): JsonSchema {
  const statuses = new Set(codes.map(httpStatusOf));
  if (statuses.size !== 1)
    throw new Error(`codes of different statuses in one response: ${codes.join(", ")}`);
  const levels = codes.map((code) => ERROR_CODE_DOCS[code].metered);
  const level: Metered =
    metered ??
    (levels.every((l) => l === "always")
      ? "always"
      : levels.every((l) => l === "never")
        ? "never"
        : "sometimes");
  const retryAfter = codes.includes("RATE_LIMIT_EXCEEDED")
    ? "required"
    : codes.includes("AGENT_UNAVAILABLE") || codes.includes("IDEMPOTENCY_KEY_IN_USE")
      ? "optional"
      : undefined;
  return {
    description: codes.map((code) => `\`${code}\`: ${ERROR_CODE_DOCS[code].when}`).join("\n\n"),
    headers: responseHeaders(level, retryAfter),
    content: { "application/json": { schema: schemaRef("ErrorResponse") } },
    "x-error-codes": [...codes],
  };
}

export function statusOf(codes: readonly ErrorCode[]): number {
  return httpStatusOf(codes[0]!);
}
