import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "@agentry/errors";
import { LogLevel, WebAPIPlatformError, WebClient } from "@slack/web-api";
import { type ConnectorContext, PlatformConnector, type PlatformDriver } from "../platform.js";
import { showThinking, slackPost, slackReply } from "./reply.js";

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

class SlackConnector extends PlatformConnector {
  private readonly client: WebClient;
  private me: SlackIdentity | undefined;

  constructor(
    context: ConnectorContext,
    private readonly options: SlackOptions,
  ) {
    super(context, "slack");
    this.client = new WebClient(context.secrets.SLACK_BOT_TOKEN ?? "", {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      logLevel: LogLevel.ERROR,
      // A 429 is waited out for its Retry-After by the client itself; other failures are retried a few times.
      retryConfig: { retries: 5, factor: 2, minTimeout: 200, maxTimeout: 5_000 },
    });
  }

  protected async run(): Promise<void> {
    const me = await this.identify(
      async () => {
        const auth = await this.client.auth.test();
        return { userId: auth.user_id ?? "", botId: auth.bot_id };
      },
      (error) =>
        error instanceof WebAPIPlatformError && REJECTED_TOKEN.has(error.data.error)
          ? {
              client: `Slack rejected the bot token: ${error.data.error}`,
              agent: `Slack rejected SLACK_BOT_TOKEN (${error.data.error}); set a valid bot token.`,
            }
          : undefined,
      AUTH_BACKOFF_MS,
    );
    if (!me) return;
    this.me = me;
    this.markConnected();
  }

  /**
   * An Events API request the gateway took for this agent: `proof` is what Slack sent to prove itself,
   * `<X-Slack-Request-Timestamp>:<X-Slack-Signature>`, and `body` the raw request body it signed.
   */
  async post(roomId: string, reply: string, messageKey: string): Promise<void> {
    // `slack:<channel>` or `slack:<channel>:<thread ts>`, as turns give it.
    const [, channel = "", thread] = roomId.split(":");
    await this.deliverUnasked(messageKey, reply, slackPost(this.client, channel, thread));
  }

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
    await this.once(messageKey, () => this.handle(me, { ...event, text, channel, ts }, messageKey));
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
    const direct = event.channel_type === "im";
    // In a channel the reply opens (or continues) the message's thread, and the thread is the conversation; in a
    // DM the reply stays in the DM unless the message was itself in a thread.
    const thread = direct ? event.thread_ts : (event.thread_ts ?? event.ts);
    await this.answer(
      {
        direct,
        addressed: event.type === "app_mention" || event.text.includes(`<@${me.userId}>`),
        fromBot: event.bot_id !== undefined || event.user === me.userId,
        chatId: event.channel,
      },
      () => ({
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
      }),
      slackReply(this.client, { channel: event.channel, thread, ts: event.ts }),
      () => {
        showThinking(this.client, event.channel, thread);
        return { stop() {} };
      },
    );
  }
}

/** The text without the agent's `<@U…>` mention, which means nothing to the model. */
function withoutMention(text: string, me: SlackIdentity): string {
  const stripped = text.replaceAll(`<@${me.userId}>`, "").trim();
  return stripped.length > 0 ? stripped : text;
}
