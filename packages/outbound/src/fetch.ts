import {
  Agent,
  type RequestInit as UndiciRequestInit,
  Response as UndiciResponse,
  fetch as undiciFetch,
} from "undici";
import { checkUrl, guardedLookup, type OutboundPolicy, OutboundRefusedError } from "./guard.js";

export interface GuardedFetchOptions {
  /** The most bytes of a response body read before the body fails (default 5 MiB). */
  maxResponseBytes?: number;
  /** The most a call may take, from the request to the last byte of the body (default 30 s). */
  timeoutMs?: number;
  /** Per connection attempt (default 10 s). */
  connectTimeoutMs?: number;
  /** Resolution used instead of the system's, for tests. */
  lookup?: Parameters<typeof guardedLookup>[1];
}

/** A `fetch` for calls made for users, and the pool of connections it keeps. */
export interface GuardedFetcher {
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  close(): Promise<void>;
}

/**
 * A standard `fetch` (undici's) whose every call passes the guard of `OutboundClient`: the URL is checked first,
 * each connection connects only to addresses checked as it is made (so DNS rebinding is caught), and redirects are
 * answered, never followed. The whole call has a deadline, and a body longer than the limit fails as it is read
 * (at once when its Content-Length says so). The plugins' `PluginHost.fetch` is one of these.
 */
export function createGuardedFetch(
  policy: OutboundPolicy,
  options: GuardedFetchOptions = {},
): GuardedFetcher {
  const maxBytes = options.maxResponseBytes ?? 5 * 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const agent = new Agent({
    connect: { lookup: guardedLookup(policy, options.lookup), timeout: options.connectTimeoutMs ?? 10_000 },
  });
  return {
    async fetch(input, init = {}) {
      const url = checkUrl(input instanceof URL ? input.href : String(input), policy);
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
      let response: UndiciResponse;
      try {
        response = await undiciFetch(url, {
          ...(init as UndiciRequestInit),
          redirect: "manual",
          signal,
          dispatcher: agent,
        });
      } catch (error) {
        throw refusal(error) ?? timedOut(deadline, timeoutMs) ?? error;
      }
      return limited(response, maxBytes, deadline, timeoutMs) as unknown as Response;
    },
    close: () => agent.close(),
  };
}

/** The guard's refusal behind a failed fetch (undici wraps connection errors in a TypeError's cause). */
function refusal(error: unknown): OutboundRefusedError | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundRefusedError) return cause;
  }
  return undefined;
}

function timedOut(deadline: AbortSignal, timeoutMs: number): Error | undefined {
  return deadline.aborted ? new OutboundRefusedError(`no complete answer within ${timeoutMs} ms`) : undefined;
}

/** The response with a body that errors once more than `maxBytes` have come. */
function limited(
  response: UndiciResponse,
  maxBytes: number,
  deadline: AbortSignal,
  timeoutMs: number,
): UndiciResponse {
  if (!response.body) return response;
  const tooLarge = () => new OutboundRefusedError(`the response is larger than ${maxBytes} bytes`);
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    void response.body.cancel().catch(() => {});
    throw tooLarge();
  }
  let received = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        if (received > maxBytes) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
      flush(controller) {
        const late = timedOut(deadline, timeoutMs);
        if (late) controller.error(late);
      },
    }),
  );
  return new UndiciResponse(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
