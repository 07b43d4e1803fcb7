import { Agent, type Dispatcher, request } from "undici";
import { checkUrl, guardedLookup, type OutboundPolicy } from "./guard.js";

export interface OutboundClientOptions {
  /** Per connection attempt (default 10 s). */
  connectTimeoutMs?: number;
  /** Resolution used instead of the system's, for tests. */
  lookup?: Parameters<typeof guardedLookup>[1];
}

type RequestOptions = Omit<Dispatcher.RequestOptions, "origin" | "path" | "method"> & {
  method?: Dispatcher.HttpMethod;
};

/**
 * HTTP calls made for users, every one through the guard: the URL is checked first (scheme, credentials, an
 * address written in it), then, as each connection is made, the host is resolved and every address checked, and
 * only a checked address is connected to, so a later resolution cannot point the call elsewhere (DNS rebinding).
 * Redirects are not followed, so a public URL cannot hand the call on to a private one either.
 */
export class OutboundClient {
  private readonly agent: Agent;

  constructor(
    readonly policy: OutboundPolicy,
    options: OutboundClientOptions = {},
  ) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(policy, options.lookup), timeout: options.connectTimeoutMs ?? 10_000 },
    });
  }

  /** undici's `request` through the guard; throws OutboundRefusedError for a destination the policy refuses. */
  request(url: string, options: RequestOptions = {}): Promise<Dispatcher.ResponseData> {
    const checked = checkUrl(url, this.policy);
    return request(checked, { ...options, dispatcher: this.agent });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
