import { newId } from "@agentry/core";
import { withRequestScope } from "@agentry/logging";
import type { Interceptor } from "@connectrpc/connect";

/** The header that carries the id of the public request an RPC serves. */
export const REQUEST_ID_HEADER = "x-request-id";

// Anything else (too long, odd characters) is not trusted into the logs; the call gets an id of its own.
const ACCEPTABLE_ID = /^[\w.:-]{1,128}$/;

/**
 * Runs each call inside the request scope of the id its caller sent, so every log line written while serving it
 * names the public request.
 */
export const requestScopeInterceptor: Interceptor = (next) => (request) => {
  const sent = request.header.get(REQUEST_ID_HEADER);
  const requestId = sent && ACCEPTABLE_ID.test(sent) ? sent : newId("request");
  return withRequestScope({ requestId }, () => next(request));
};
