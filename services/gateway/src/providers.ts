import type { Logger } from "@agentry/logging";

/** What the conversation service serves (its ListProviders answer), as agents are checked against it. */
export interface ServedProviders {
  /** Each provider once: its default model and, when it serves only some models, their exact names. */
  providers: { name: string; defaultModel: string; models: string[] }[];
  /** The provider of agents that name none; it may be one that is not served (a misconfiguration). */
  defaultProvider: string;
}

export interface ProviderCatalogOptions {
  /** Asks the conversation service. */
  load: () => Promise<ServedProviders>;
  /** How long an answer is used before it is asked again (in the background, the old one meanwhile). */
  ttlMs: number;
  /** After a failed load with nothing known, how long callers get `undefined` at once instead of waiting. */
  retryMs: number;
  logger: Logger;
}

/**
 * The conversation service's providers, cached. It changes only when that service restarts with another
 * configuration, so an answer is kept for `ttlMs` and then refreshed behind the callers' backs. While nothing is
 * known (the service has not answered yet, in split mode), `get` answers `undefined`: agent writes then skip the
 * checks that need it rather than fail, as agent routes keep working while the conversation service is down.
 */
export class ProviderCatalog {
  readonly #options: ProviderCatalogOptions;
  #value: ServedProviders | undefined;
  #loadedAt = 0;
  #failedAt = Number.NEGATIVE_INFINITY;
  #loading: Promise<ServedProviders | undefined> | undefined;

  constructor(options: ProviderCatalogOptions) {
    this.#options = options;
  }

  async get(): Promise<ServedProviders | undefined> {
    const now = Date.now();
    if (this.#value !== undefined && now - this.#loadedAt < this.#options.ttlMs) return this.#value;
    if (this.#value === undefined && now - this.#failedAt < this.#options.retryMs) return undefined;
    const loading = this.#load();
    return this.#value ?? loading;
  }

  #load(): Promise<ServedProviders | undefined> {
    this.#loading ??= this.#options
      .load()
      .then(
        (value) => {
          this.#value = value;
          this.#loadedAt = Date.now();
          return value;
        },
        (error: unknown) => {
          this.#failedAt = Date.now();
          // A stale answer stays in use; the conversation service's outage is logged where its calls fail.
          if (this.#value === undefined) {
            this.#options.logger.warn(
              { err: error instanceof Error ? error.message : String(error) },
              "the conversation service's providers are unknown: agents are written without checking their model",
            );
          }
          return this.#value;
        },
      )
      .finally(() => {
        this.#loading = undefined;
      });
    return this.#loading;
  }
}
