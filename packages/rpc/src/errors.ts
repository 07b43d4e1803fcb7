import { mapAsyncIterable } from "@agentry/core";
import { AppError, toConnectError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import { ConnectError, type Interceptor } from "@connectrpc/connect";

/**
 * How every service's RPCs fail, in one place: handlers throw AppError (or let the store's through), and the
 * caller receives the ConnectError that `fromConnectError` turns back into the same AppError. Anything else is a
 * bug: it is logged here with its cause and answered as INTERNAL_ERROR, so no internal detail reaches the caller.
 * Streams are covered too, for an error at any point of the iteration.
 */
export function errorInterceptor(logger: Logger): Interceptor {
  const translate = (error: unknown, rpc: string): ConnectError => {
    if (error instanceof AppError) return toConnectError(error);
    if (error instanceof ConnectError) return error;
    logger.error({ err: error, rpc }, "rpc failed");
    return toConnectError(new AppError("INTERNAL_ERROR", "Internal error."));
  };
  return (next) => async (request) => {
    const rpc = `${request.service.typeName}/${request.method.name}`;
    let response: Awaited<ReturnType<typeof next>>;
    try {
      response = await next(request);
    } catch (error) {
      throw translate(error, rpc);
    }
    if (!response.stream) return response;
    return {
      ...response,
      message: mapAsyncIterable(response.message, { map: (m) => m, onError: (e) => translate(e, rpc) }),
    };
  };
}
