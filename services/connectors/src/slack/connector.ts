import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "@agentry/errors";
import { LogLevel, WebAPIPlatformError, WebClient } from "@slack/web-api";
import { deliverReply } from "../delivery.js";
import { answers } from "../domain/clients.js";
import type { ClientError, ClientState, ClientStatus } from "../domain/status.js";
import type { Connector, ConnectorContext, PlatformDriver } from "../platform.js";
import { showThinking, slackReply } from "./reply.js";

export interface SlackOptions {
  /** The Web API's root (SLACK_API_URL), ending in `/`; Slack's own by default. */
  apiUrl?: string | undefined;
  /** Now, for the signature's age check. */
  now?: () => number;
}

/** Slack's own advice: a request signed more than five minutes ago may be a replay. */
export const SLACK_MAX_SIGNATURE_AGE_SECONDS = 5 * 60;
const AUTH_BACKOFF_MS = 2_000;
/** auth.test errors that mean the token itself is bad, not that Slack is unreachable. */
const REJECTED_TOKEN = new Set(["invalid_auth", "not_authed", "account_inactive", "token_revoked"]);
/**
 * Message subtypes a person still wrote (with a file, or a thread reply also sent to the channel); the others are
 * edits, deletions, joins and bots.
 */
const PERSON_SUBTYPES = new Set(["file_share", "thread_broadcast"]);

/** The `X-Slack-Signature` of a body: `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<body>` under the secret. */
export function slackSignature(signingSecret: string, timestamp: string, body: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

/** Slack through the Events API (pushed to the gateway) and `@slack/web-api`'s WebClient for replies. */
export function slackDriver(options: SlackOptions = {}): PlatformDriver {
  return { type: "slack", start: (context) => new SlackConnector(context, options) };
}

interface SlackIdentity {
  userId: string;
  botId: string | undefined;
}

interface SlackMessageEvent {
  type: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  channel?: string;
  channel_type?: string;
  ts?: string;
  thread_ts?: string;
  client_msg_id?: string;
}

class SlackConnector implements Connector {
  private readonly client: WebClient;
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  private state: ClientState = "connecting";
  private connectedAt: string | null = null;
  private lastEventAt: string | null = null;
  private lastError: ClientError | null = null;
  private me: SlackIdentity | undefined;
  /** Messages being answered: Slack retries an event it has no answer for within 3 s, and the retry is dropped. */
  private readonly inHand = new Set<string>();

  constructor(
    private readonly context: ConnectorContext,
    private readonly options: SlackOptions,
  ) {
    this.client = new WebClient(context.secrets.SLACK_BOT_TOKEN ?? "", {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      logLevel: LogLevel.ERROR,
      // A 429 is waited out for its Retry-After by the client itself; other failures are retried a few times.
      retryConfig: { retries: 5, factor: 2, minTimeout: 200, maxTimeout: 5_000 },
    });
    this.done = this.run().catch((error: unknown) => {
      if (!this.abort.signal.aborted) context.logger.error({ err: error }, "slack connector stopped");
    });
  }

  status(): ClientStatus {
    return {
      type: "slack",
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
  }

  private async run(): Promise<void> {
    const { context } = this;
    while (!this.abort.signal.aborted && !this.me) {
      try {
        const auth = await this.client.auth.test();
        this.me = { userId: auth.user_id ?? "", botId: auth.bot_id };
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (error instanceof WebAPIPlatformError && REJECTED_TOKEN.has(error.data.error)) {
          this.fail("CLIENT_AUTH_FAILED", `Slack rejected the bot token: ${error.data.error}`);
          context.authFailed(`Slack rejected SLACK_BOT_TOKEN (${error.data.error}); set a valid bot token.`);
          return;
        }
        this.recordError("PLATFORM_UNAVAILABLE", describe(error));
        await sleep(AUTH_BACKOFF_MS, this.abort.signal);
      }
    }
    if (!this.me) return;
    context.authAccepted();
    this.state = "connected";
    this.connectedAt = new Date().toISOString();
  }

  /**
   * An Events API request the gateway took for this agent: `proof` is what Slack sent to prove itself,
   * `<X-Slack-Request-Timestamp>:<X-Slack-Signature>`, and `body` the raw request body it signed.
   */
  async receive(proof: string, body: string): Promise<void> {
    this.verify(proof, body);
    let payload: { type?: string; event?: SlackMessageEvent };
    try {
      payload = JSON.parse(body) as typeof payload;
    } catch {
      throw new AppError("INVALID_REQUEST", "The request must be a JSON Slack Events API payload.");
    }
    // The gateway answers Slack's challenge itself once the signature holds.
    if (payload.type !== "event_callback" || !payload.event) return;
    const me = this.me;
    if (this.state !== "connected" || !me) {
      // Not answered: Slack sends the event again shortly, by which time auth.test has told who the agent is.
      throw new AppError("AGENT_UNAVAILABLE", "The agent's Slack client is still connecting; retry shortly.");
    }
    const event = payload.event;
    if (event.type !== "message" && event.type !== "app_mention") return;
    if (event.subtype !== undefined && !PERSON_SUBTYPES.has(event.subtype)) return;
    const { text, channel, ts } = event;
    if (!text || !channel || !ts) return;
    const messageKey = `slack:${me.userId}:${channel}:${event.client_msg_id ?? ts}`;
    if (this.inHand.has(messageKey)) return;
    this.inHand.add(messageKey);
    try {
      await this.handle(me, { ...event, text, channel, ts }, messageKey);
    } finally {
      this.inHand.delete(messageKey);
    }
  }

  /** Slack's request signing: the HMAC of the timestamp and the raw body, and a timestamp at most 5 minutes old. */
  private verify(proof: string, body: string): void {
    const at = proof.indexOf(":");
    const timestamp = at > 0 ? proof.slice(0, at) : "";
    const given = Buffer.from(at > 0 ? proof.slice(at + 1) : "");
    const seconds = Number(timestamp);
    const now = (this.options.now ?? Date.now)() / 1000;
    if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > SLACK_MAX_SIGNATURE_AGE_SECONDS) {
      throw new AppError(
        "UNAUTHORIZED",
        "X-Slack-Request-Timestamp is missing or more than 5 minutes from now; Slack signs each request afresh.",
      );
    }
    const expected = Buffer.from(
      slackSignature(this.context.secrets.SLACK_SIGNING_SECRET ?? "", timestamp, body),
    );
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError(
        "UNAUTHORIZED",
        "X-Slack-Signature does not match this agent's SLACK_SIGNING_SECRET; check the app's signing secret.",
      );
    }
  }

  private async handle(
    me: SlackIdentity,
    event: SlackMessageEvent & { text: string; channel: string; ts: string },
    messageKey: string,
  ): Promise<void> {
    const { context } = this;
    this.lastEventAt = new Date().toISOString();
    const direct = event.channel_type === "im";
    const facts = {
      direct,
      addressed: event.type === "app_mention" || event.text.includes(`<@${me.userId}>`),
      fromBot: event.bot_id !== undefined || event.user === me.userId,
      chatId: event.channel,
    };
    if (!answers(context.config, facts)) return;
    if (await context.store.answered(messageKey)) return;
    // In a channel the reply opens (or continues) the message's thread, and the thread is the conversation; in a
    // DM the reply stays in the DM unless the message was itself in a thread.
    const thread = direct ? event.thread_ts : (event.thread_ts ?? event.ts);
    showThinking(this.client, event.channel, thread);
    const reply = await context.runTurn({
      text: withoutMention(event.text, me),
      userId: `slack:${event.user ?? event.channel}`,
      roomId: thread ? `slack:${event.channel}:${thread}` : `slack:${event.channel}`,
      source: {
        platform: "slack",
        chatId: event.channel,
        messageId: event.client_msg_id ?? event.ts,
        username: event.user ?? null,
      },
      messageKey,
    });
    await deliverReply(context, {
      platform: "slack",
      messageKey,
      reply,
      ...slackReply(this.client, { channel: event.channel, thread, ts: event.ts }),
    });
  }

  private fail(code: string, message: string): void {
    this.state = "failed";
    this.recordError(code, message);
  }

  private recordError(code: string, message: string): void {
    this.lastError = { code, message, at: new Date().toISOString() };
  }
}

/** The text without the agent's `<@U…>` mention, which means nothing to the model. */
function withoutMention(text: string, me: SlackIdentity): string {
  const stripped = text.replaceAll(`<@${me.userId}>`, "").trim();
  return stripped.length > 0 ? stripped : text;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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
