import { checkNumber, type Fetch, readEnv, Transport } from "./core.js";
import { AgentryError } from "./errors.js";
import { Agents } from "./resources/agents.js";
import { ApiKeys } from "./resources/api-keys.js";
import { AuditEvents } from "./resources/audit-events.js";
import { Budgets } from "./resources/budgets.js";
import { Members } from "./resources/members.js";
import { Plugins } from "./resources/plugins.js";
import { AccountUsage } from "./resources/usage.js";
import { Users } from "./resources/users.js";
import { WebhookEndpoints } from "./resources/webhook-endpoints.js";
import type { RateLimitInfo } from "./types.js";
import { type Webhooks, webhooks } from "./webhooks.js";

/** The address of a service started locally with its defaults. */
export const DEFAULT_BASE_URL = "http://localhost:8080/v1";
/** The recommended client timeout of the API: 30 s. */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 2;
/** No wait before a retry is longer than this by default; the API's rate-limit window is one minute. */
export const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;

/** Settings of a client. Each falls back to the environment (where there is one), then to its default. */
export interface ClientOptions {
  /** The API key, sent as `Authorization: Bearer <key>`. Default: `AGENTRY_API_KEY`. Required. */
  apiKey?: string | undefined;
  /** The API's address, ending in `/v1`. Default: `AGENTRY_BASE_URL`, else `http://localhost:8080/v1`. */
  baseURL?: string | undefined;
  /**
   * Milliseconds each attempt may take before it fails with `APITimeoutError` (30 s). For a stream: until it
   * starts, then between two chunks.
   */
  timeout?: number | undefined;
  /** How many times a failed attempt is retried (2). 0 disables retries. */
  maxRetries?: number | undefined;
  /**
   * The longest wait before a retry, in milliseconds (60 s). A longer `Retry-After` is cut to this; the error
   * finally thrown still carries the server's `retryAfter`.
   */
  maxRetryDelay?: number | undefined;
  /** A `fetch` to use instead of the global one. */
  fetch?: Fetch | undefined;
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string> | undefined;
}

/**
 * The Agentry API client.
 *
 * ```ts
 * import { Agentry } from "@agentry/sdk";
 *
 * const client = new Agentry(); // AGENTRY_API_KEY, AGENTRY_BASE_URL
 * const agent = await client.agents.create({ name: "Ada", bio: ["Counts things"] });
 * const reply = await client.agents.messages.send(agent.id, { text: "Hello!", userId: "u1" });
 * console.log(reply.text);
 * ```
 */
export class Agentry {
  /** Agents, and messages to them. */
  readonly agents: Agents;
  /** The account's API keys (scope `keys:manage`). */
  readonly apiKeys: ApiKeys;
  /** The people of the account and their roles (scopes `members:read`, `members:write`). */
  readonly members: Members;
  /** The account's spend budgets. */
  readonly budgets: Budgets;
  /** The account's audit log: who changed what, when and from where (scope `audit:read`). */
  readonly auditEvents: AuditEvents;
  /** A user's data across every agent: export and erasure. */
  readonly users: Users;
  /** The account's usage figures (scope `usage:read`). */
  readonly usage: AccountUsage;
  /** Where the service sends its events, and their delivery logs (scope `webhooks:manage`). */
  readonly webhookEndpoints: WebhookEndpoints;
  /** The plugin catalogue: what an agent's `plugins` may name. */
  readonly plugins: Plugins;
  /** Verification of webhook deliveries; the same as the `webhooks` export, which needs no client. */
  readonly webhooks: Webhooks = webhooks;
  /** The API's address in use, without a trailing slash. */
  readonly baseURL: string;
  /** Milliseconds per attempt. */
  readonly timeout: number;
  /** Retries per call. */
  readonly maxRetries: number;
  /** Longest wait before a retry, in milliseconds. */
  readonly maxRetryDelay: number;
  readonly #options: ClientOptions;
  readonly #transport: Transport;

  /**
   * Creates a client. Throws `AgentryError` when no API key is given nor found in `AGENTRY_API_KEY`, or when a
   * setting is out of range.
   */
  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? readEnv("AGENTRY_API_KEY");
    if (!apiKey) {
      throw new AgentryError(
        "No API key: pass `apiKey` to new Agentry({ apiKey }) or set the AGENTRY_API_KEY environment variable.",
      );
    }
    const baseURL = (options.baseURL ?? readEnv("AGENTRY_BASE_URL") ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    if (!/^https?:\/\/[^/]/i.test(baseURL)) {
      throw new AgentryError(`baseURL must be an http(s) URL such as ${DEFAULT_BASE_URL}; got '${baseURL}'.`);
    }
    const globalFetch = globalThis.fetch as Fetch | undefined;
    if (!options.fetch && typeof globalFetch !== "function") {
      throw new AgentryError("No fetch in this environment: pass one as the `fetch` option.");
    }
    this.#options = options;
    this.baseURL = baseURL;
    this.timeout = checkNumber("timeout", options.timeout ?? DEFAULT_TIMEOUT_MS, 1, false);
    this.maxRetries = checkNumber("maxRetries", options.maxRetries ?? DEFAULT_MAX_RETRIES, 0, true);
    this.maxRetryDelay = checkNumber(
      "maxRetryDelay",
      options.maxRetryDelay ?? DEFAULT_MAX_RETRY_DELAY_MS,
      0,
      false,
    );
    this.#transport = new Transport({
      apiKey,
      baseURL,
      timeout: this.timeout,
      maxRetries: this.maxRetries,
      maxRetryDelay: this.maxRetryDelay,
      // Called through a wrapper: browsers refuse a `fetch` detached from its global.
      fetch: options.fetch ?? ((url, init) => globalThis.fetch(url, init)),
      defaultHeaders: { ...options.defaultHeaders },
    });
    this.agents = new Agents(this.#transport);
    this.apiKeys = new ApiKeys(this.#transport);
    this.members = new Members(this.#transport);
    this.budgets = new Budgets(this.#transport);
    this.auditEvents = new AuditEvents(this.#transport);
    this.users = new Users(this.#transport);
    this.usage = new AccountUsage(this.#transport);
    this.webhookEndpoints = new WebhookEndpoints(this.#transport);
    this.plugins = new Plugins(this.#transport);
  }

  /**
   * The rate-limit state (`X-RateLimit-*`) of the most recent response that reported it, errors included; `null`
   * before the first. It describes the bucket of that request with the least left.
   */
  get lastRateLimit(): RateLimitInfo | null {
    return this.#transport.lastRateLimit;
  }

  /** A new client with these settings changed and the others kept (its rate-limit state starts empty). */
  withOptions(options: ClientOptions): Agentry {
    return new Agentry({ ...this.#options, ...options });
  }
}
