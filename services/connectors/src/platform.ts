import type { Logger } from "@agentry/logging";
import { type Delivery, deliverReply } from "./delivery.js";
import { answers, type ClientConfig, type InboundFacts, type Platform } from "./domain/clients.js";
import {
  CLIENT_AUTH_FAILED,
  type ClientError,
  type ClientState,
  type ClientStatus,
} from "./domain/status.js";
import type { ConnectorMetrics } from "./metrics.js";
import type { ConnectorStore } from "./store/types.js";

/** One inbound platform message, turned into a conversation turn. */
export interface TurnRequest {
  text: string;
  /** `<platform>:<user id>` */
  userId: string;
  /** `<platform>:<chat or channel id>` */
  roomId: string;
  source: { platform: Platform; chatId: string; messageId: string; username: string | null };
  /** Identifies the platform message across processes: the turn is stored once under it. */
  messageKey: string;
}

/** The reply's text, or undefined when the turn failed (the caller then sends the apology). */
export type RunTurn = (request: TurnRequest) => Promise<string | undefined>;

/** What the service gives each connector it starts. */
export interface ConnectorContext {
  agentId: string;
  config: ClientConfig;
  /** The agent secrets the platform needs (`PLATFORM_SECRETS`), all present. */
  secrets: Readonly<Record<string, string>>;
  store: ConnectorStore;
  /** Messages in, replies out, failures and lag, per platform. */
  metrics?: ConnectorMetrics;
  runTurn: RunTurn;
  logger: Logger;
  /** This process, as lease holder. */
  holder: string;
  /** Where the platform pushes this agent's updates (webhook mode): the gateway's connector route. */
  webhookUrl: string | undefined;
  /** The platform rejected the credentials: the service marks the agent `error` and stops the connector. */
  authFailed(message: string): void;
  /** The platform accepted the credentials: an agent in `error` for them is active again. */
  authAccepted(): void;
}

/** A running platform session for one agent. */
export interface Connector {
  status(): ClientStatus;
  /**
   * Handles an update the platform pushed to the gateway, once `secretToken` proves it came from the platform;
   * throws UNAUTHORIZED otherwise. Absent for connectors that only poll or hold a session.
   */
  receive?(secretToken: string, body: string): Promise<void>;
  /**
   * Posts a reply no platform message asked for (a schedule's) to the chat `roomId` names (`<platform>:…`, as the
   * platform's turns give it), at most once across processes under `messageKey`. Absent where not supported.
   */
  post?(roomId: string, reply: string, messageKey: string): Promise<void>;
  /** Stops taking messages and waits for the one in hand to be answered or given up. */
  stop(): Promise<void>;
}

/** One platform the service runs. */
export interface PlatformDriver {
  type: Platform;
  start(context: ConnectorContext): Connector;
}

/** What a connector knows of a platform's answer to its credentials. */
export interface Rejection {
  /** For the client's `lastError`. */
  client: string;
  /** For the agent's `statusReason`: what the platform said and what to do. */
  agent: string;
}

/**
 * The lifecycle every platform shares: its state for `status()`, a run started once the connector is built and
 * ended by `stop()`, the credentials checked (a rejection sets the agent `error` and ends the run), and each inbound
 * message answered at most once. A platform supplies `run` and the calls to its own API.
 */
export abstract class PlatformConnector implements Connector {
  protected readonly abort = new AbortController();
  protected state: ClientState = "connecting";
  private connectedAt: string | null = null;
  private lastEventAt: string | null = null;
  private lastError: ClientError | null = null;
  private readonly done: Promise<void>;
  /** Messages being answered: a platform's retry of one in hand is dropped. */
  private readonly inHand = new Set<string>();

  constructor(
    protected readonly context: ConnectorContext,
    readonly type: Platform,
  ) {
    // Run once the platform's own constructor has set up its client.
    this.done = Promise.resolve()
      .then(() => this.run())
      .catch((error: unknown) => {
        if (!this.stopping) context.logger.error({ err: error }, `${type} connector stopped`);
      });
  }

  /** The platform's session: returns when it ends (the connector stopped, or the token was rejected). */
  protected abstract run(): Promise<void>;

  /** What the platform leaves behind once the run has ended (a lease, a gateway session). */
  protected async release(): Promise<void> {}

  status(): ClientStatus {
    return {
      type: this.type,
      state: this.state,
      connectedAt: this.connectedAt,
      lastEventAt: this.lastEventAt,
      lastError: this.lastError,
    };
  }

  async stop(): Promise<void> {
    if (this.state !== "failed") this.state = "stopped";
    this.abort.abort();
    await this.done;
    await this.release();
  }

  protected get stopping(): boolean {
    return this.abort.signal.aborted;
  }

  /**
   * Asks the platform who the bot is until it answers (`undefined` once stopping or the token is rejected).
   * `rejected` tells a refused token from an unreachable platform, which is asked again after `backoffMs`.
   */
  protected async identify<T>(
    whoAmI: () => Promise<T>,
    rejected: (error: unknown) => Rejection | undefined,
    backoffMs: number,
  ): Promise<T | undefined> {
    while (!this.stopping) {
      try {
        const me = await whoAmI();
        if (this.stopping) return undefined;
        this.context.authAccepted();
        return me;
      } catch (error) {
        if (this.stopping) return undefined;
        const rejection = rejected(error);
        if (rejection) {
          this.rejectToken(rejection);
          return undefined;
        }
        this.recordError("PLATFORM_UNAVAILABLE", describe(error));
        await sleep(backoffMs, this.abort.signal);
      }
    }
    return undefined;
  }

  /** The platform refused the token: the client fails and the agent goes to `error` until it changes. */
  protected rejectToken(rejection: Rejection): void {
    this.fail(CLIENT_AUTH_FAILED, rejection.client);
    this.context.authFailed(rejection.agent);
  }

  protected markConnected(): void {
    if (this.state === "connected") return;
    this.state = "connected";
    this.connectedAt = new Date().toISOString();
  }

  protected fail(code: string, message: string): void {
    this.state = "failed";
    this.recordError(code, message);
  }

  protected recordError(code: string, message: string): void {
    this.lastError = { code, message, at: new Date().toISOString() };
  }

  /** Posts `reply` through `deliverReply` (claimed under `messageKey` first, so no process sends it twice). */
  protected async deliverUnasked(
    messageKey: string,
    reply: string,
    out: Pick<Delivery, "send" | "classify">,
  ): Promise<void> {
    await deliverReply(this.context, {
      platform: this.type,
      messageKey,
      reply,
      writtenAt: Date.now(),
      ...out,
    });
  }

  /** Runs `work` unless a message under `key` is already in hand here (a pushed update the platform sent again). */
  protected async once(key: string, work: () => Promise<void>): Promise<void> {
    if (this.inHand.has(key)) return;
    this.inHand.add(key);
    try {
      await work();
    } finally {
      this.inHand.delete(key);
    }
  }

  /**
   * Answers one inbound message when `respondIn` and `allowedChats` say so and no process has answered it: runs
   * its turn (typing meanwhile), then posts the reply (or the apology) through `deliverReply`, which claims it in
   * the store first so that no process sends it twice.
   */
  protected async answer(
    facts: InboundFacts,
    request: () => TurnRequest,
    reply: Pick<Delivery, "send" | "classify" | "writtenAt">,
    typing?: () => { stop(): void },
  ): Promise<void> {
    const { context } = this;
    this.lastEventAt = new Date().toISOString();
    if (!answers(context.config, facts)) return;
    const turn = request();
    if (await context.store.answered(turn.messageKey)) return;
    const indicator = typing?.();
    let text: string | undefined;
    try {
      text = await context.runTurn(turn);
    } finally {
      indicator?.stop();
    }
    // Sent even when stopping: the message in hand is answered before the connector ends.
    await deliverReply(context, { platform: this.type, messageKey: turn.messageKey, reply: text, ...reply });
  }
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Waits `ms`, or less when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done);
  });
}
