import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { AppError } from "./app-error.js";
import { ERROR_CODES, httpStatusOf } from "./codes.js";
import { fromConnectError, toConnectError } from "./connect.js";

describe("error codes", () => {
  it("pair every public code with the status of docs/api/errors-and-status-codes.md", () => {
    expect(Object.fromEntries(ERROR_CODES.map((code) => [code, httpStatusOf(code)]))).toEqual({
      INVALID_REQUEST: 400,
      UNAUTHORIZED: 401,
      BUDGET_EXCEEDED: 402,
      FORBIDDEN: 403,
      INSUFFICIENT_QUOTA: 403,
      AGENT_NOT_FOUND: 404,
      CONVERSATION_NOT_FOUND: 404,
      MESSAGE_NOT_FOUND: 404,
      STREAM_NOT_FOUND: 404,
      WEBHOOK_NOT_FOUND: 404,
      DELIVERY_NOT_FOUND: 404,
      SECRET_NOT_FOUND: 404,
      API_KEY_NOT_FOUND: 404,
      MEMORY_NOT_FOUND: 404,
      DOCUMENT_NOT_FOUND: 404,
      SCHEDULE_NOT_FOUND: 404,
      MEMBER_NOT_FOUND: 404,
      BUDGET_NOT_FOUND: 404,
      NOT_FOUND: 404,
      METHOD_NOT_ALLOWED: 405,
      AGENT_INACTIVE: 409,
      IDEMPOTENCY_KEY_IN_USE: 409,
      PRECONDITION_FAILED: 412,
      CONVERSATION_BUSY: 409,
      MESSAGE_NOT_AWAITING_APPROVAL: 409,
      APPROVAL_EXPIRED: 409,
      MEMBER_EXISTS: 409,
      LAST_OWNER: 409,
      PAYLOAD_TOO_LARGE: 413,
      UNSUPPORTED_MEDIA_TYPE: 415,
      IDEMPOTENCY_KEY_REUSED: 422,
      RATE_LIMIT_EXCEEDED: 429,
      INTERNAL_ERROR: 500,
      MODEL_ERROR: 502,
      AGENT_UNAVAILABLE: 503,
    });
  });
});

describe("RPC translation", () => {
  it("carries every code, its details and Retry-After across an RPC", () => {
    for (const code of ERROR_CODES) {
      const original = new AppError(code, `message for ${code}`, {
        details: [{ field: "bio[2]", issue: "must be a string" }],
        retryAfterSeconds: 7,
      });
      // Through the wire: only the code, message and metadata survive.
      const wire = toConnectError(original);
      const received = new ConnectError(wire.rawMessage, wire.code, wire.metadata);
      const back = fromConnectError(received);
      expect(back.code).toBe(code);
      expect(back.message).toBe(`message for ${code}`);
      expect(back.details).toEqual([{ field: "bio[2]", issue: "must be a string" }]);
      expect(back.retryAfterSeconds).toBe(7);
    }
  });

  it("maps foreign RPC failures by code, with generic messages that leak nothing", () => {
    const unavailable = fromConnectError(
      new ConnectError("connect ECONNREFUSED 10.0.0.7:8081", Code.Unavailable),
    );
    expect(unavailable.code).toBe("AGENT_UNAVAILABLE");
    expect(unavailable.message).not.toContain("10.0.0.7");
    const reset = fromConnectError(new ConnectError("read ECONNRESET", Code.Aborted));
    expect(reset.code).toBe("AGENT_UNAVAILABLE");
    expect(reset.message).not.toContain("ECONNRESET");
    const deadline = fromConnectError(new ConnectError("deadline", Code.DeadlineExceeded));
    expect(deadline.code).toBe("AGENT_UNAVAILABLE");
    const internal = fromConnectError(new ConnectError("SQLITE_CORRUPT /var/lib/x", Code.Internal));
    expect(internal.code).toBe("INTERNAL_ERROR");
    expect(internal.message).toBe("Internal error.");
    const plain = fromConnectError(new Error("TypeError: cannot read x"));
    expect(plain.code).toBe("INTERNAL_ERROR");
    expect(plain.message).not.toContain("TypeError");
  });

  it("ignores an unknown code in the metadata", () => {
    const forged = new ConnectError("x", Code.NotFound, new Headers({ "agentry-error-code": "NOT_A_CODE" }));
    expect(fromConnectError(forged).code).toBe("AGENT_NOT_FOUND");
  });
});
