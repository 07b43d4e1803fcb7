import { AppError, toConnectError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import { ConnectError } from "@connectrpc/connect";

/**
 * Wraps every method of a service implementation so that an AppError reaches the caller as the ConnectError
 * `fromConnectError` turns back into it. Anything else is a bug: it is logged here, with its cause, and rethrown
 * for Connect to answer as a bare "internal error", so no internal detail reaches the caller.
 */
export function translateErrors<T extends object>(logger: Logger, service: string, impl: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(impl)) {
    if (typeof method !== "function") continue;
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await method.apply(impl, args);
      } catch (error) {
        if (error instanceof AppError) throw toConnectError(error);
        if (error instanceof ConnectError) throw error;
        logger.error({ err: error, rpc: `${service}/${name}` }, "rpc failed");
        throw error;
      }
    };
  }
  return wrapped as T;
}
