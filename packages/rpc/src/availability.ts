import { answeredByService } from "@agentry/errors";
import type { Availability } from "@agentry/logging";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/** What a call that never got the service's answer ends with. */
const UNREACHED = new Set([Code.Unavailable, Code.DeadlineExceeded, Code.Aborted, Code.Unknown]);

/**
 * A client interceptor that tells `availability` whether the service at the other end answers: a call lost on
 * the way (refused, cut, timed out) is a failure; any answer, an error of the service's included, a recovery.
 */
export function availabilityInterceptor(availability: Availability): Interceptor {
  return (next) => async (request) => {
    try {
      const response = await next(request);
      availability.recovered();
      return response;
    } catch (error) {
      const failure = ConnectError.from(error);
      if (!answeredByService(failure) && UNREACHED.has(failure.code)) availability.failed(failure);
      else if (failure.code !== Code.Canceled) availability.recovered();
      throw error;
    }
  };
}
