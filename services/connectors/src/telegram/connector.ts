import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "@agentry/errors";
import { Api, GrammyError, type Transformer } from "grammy";
import type { Message, Update, UserFromGetMe } from "grammy/types";
import {
  type ConnectorContext,
  describe,
  PlatformConnector,
  type PlatformDriver,
  sleep,
} from "../platform.js";
import { telegramPost, telegramReply } from "./reply.js";

export interface TelegramOptions {
  /** The Bot API's root (TELEGRAM_API_URL); Telegram's own by default. */
  apiRoot?: string | undefined;
  /** How long one getUpdates waits for news, in seconds. */
  pollTimeoutSeconds?: number;
  /** How long a poller's lease on a bot token holds without renewal; another process takes over after it. */
  leaseMs?: number;
}

const DEFAULT_LEASE_MS = 10_000;
/** Telegram shows "typing…" for about 5 s per chat action. */
const TYPING_EVERY_MS = 4_000;
/** Waits after a failed poll, so an outage is not hammered. */
const POLL_BACKOFF_MS = 2_000;
const MAX_RATE_LIMIT_RETRIES = 5;

/**
 * grammY's Node build types signals with the abort-controller shim's declarations; Node's own AbortSignal is what
 * it receives at run time, so the platform's signal is passed as that type.
 */
type GrammySignal = Parameters<Api["getMe"]>[0];
const grammySignal = (signal: AbortSignal) => signal as unknown as GrammySignal;

/** Telegram by long polling, through grammY's Bot API client. */
export function telegramDriver(options: TelegramOptions = {}): PlatformDriver {
  return { type: "telegram", start: (context) => new TelegramConnector(context, options) };
}

/**
 * Honours `retry_after`: a call answered 429 is made again after the wait Telegram names, so a rate limit delays
 * a reply and never loses it.
 */
export function retryAfterRateLimit(sleep: (ms: number) => Promise<void>): Transformer {
  return async (prev, method, payload, signal) => {
    for (let attempt = 0; ; attempt++) {
      const response = await prev(method, payload, signal);
      const retryAfter = response.ok ? undefined : response.parameters?.retry_after;
      if (retryAfter === undefined || attempt >= MAX_RATE_LIMIT_RETRIES || signal?.aborted) return response;
      await sleep(retryAfter * 1000);
    }
  };
}

class TelegramConnector extends PlatformConnector {
  private readonly api: Api;
  private readonly leaseMs: number;
  private me: UserFromGetMe | undefined;

  constructor(
    context: ConnectorContext,
    private readonly options: TelegramOptions,
  ) {
    super(context, "telegram");
    const token = context.secrets.TELEGRAM_BOT_TOKEN ?? "";
    this.api = new Api(token, options.apiRoot ? { apiRoot: options.apiRoot } : {});
    this.api.config.use(retryAfterRateLimit(sleep));
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  protected override async release(): Promise<void> {
    if (this.me) await this.context.store.releaseLease(this.leaseKey(this.me), this.context.holder);
  }

  private leaseKey(me: UserFromGetMe): string {
    return `telegram:${me.id}`;
  }

  protected async run(): Promise<void> {
    const { context } = this;
    const signal = this.abort.signal;
    const me = await this.identify(
      () => this.api.getMe(grammySignal(signal)),
      (error) =>
        error instanceof GrammyError && (error.error_code === 401 || error.error_code === 404)
          ? {
              client: `Telegram rejected the bot token: ${error.description}`,
              agent: `Telegram rejected TELEGRAM_BOT_TOKEN (${error.description}); set a valid token.`,
            }
          : undefined,
      POLL_BACKOFF_MS,
    );
    if (!me) return;
    this.me = me;
    if (context.config.mode === "webhook") {
      await this.registerWebhook();
      return;
    }
    // A webhook left from webhook mode makes Telegram refuse getUpdates; updates it holds are kept.
    await this.api.deleteWebhook({ drop_pending_updates: false }, grammySignal(signal)).catch(() => {});
    const key = this.leaseKey(me);
    while (!this.stopping) {
      // One poller per bot token: the others wait, ready to take over once the holder's lease expires.
      if (!(await context.store.acquireLease(key, context.holder, this.leaseMs))) {
        this.state = "connecting";
        await sleep(this.leaseMs / 4, signal);
        continue;
      }
      this.markConnected();
      try {
        const offset = await context.store.cursor(key);
        const updates = await this.withLease(key, (pollSignal) =>
          this.api.getUpdates(
            {
              ...(offset !== undefined ? { offset: Number(offset) } : {}),
              timeout: this.options.pollTimeoutSeconds ?? 25,
              allowed_updates: ["message"],
            },
            grammySignal(pollSignal),
          ),
        );
        for (const update of updates) {
          if (this.stopping) return;
          await this.handle(me, update);
          // Past this update only once its turn is stored and its reply sent: a restart reads it again otherwise.
          await context.store.setCursor(key, String(update.update_id + 1));
        }
      } catch (error) {
        if (this.stopping) return;
        this.recordError("PLATFORM_UNAVAILABLE", describe(error));
        context.logger.warn({ err: error }, "telegram poll failed; polling again shortly");
        await sleep(POLL_BACKOFF_MS, signal);
      }
    }
  }

  /** The secret Telegram sends with each pushed update: derived from the token, so every process agrees on it. */
  private get webhookSecret(): string {
    return createHmac("sha256", this.context.secrets.TELEGRAM_BOT_TOKEN ?? "")
      .update(`agentry-telegram-webhook:${this.context.agentId}`)
      .digest("hex");
  }

  private async registerWebhook(): Promise<void> {
    const { context } = this;
    if (!context.webhookUrl) {
      this.fail(
        "WEBHOOK_URL_MISSING",
        "Webhook mode needs PUBLIC_BASE_URL set to the gateway's public https origin.",
      );
      return;
    }
    while (!this.stopping) {
      try {
        await this.api.setWebhook(
          context.webhookUrl,
          { secret_token: this.webhookSecret, allowed_updates: ["message"] },
          grammySignal(this.abort.signal),
        );
        this.markConnected();
        return;
      } catch (error) {
        if (this.stopping) return;
        this.recordError("PLATFORM_UNAVAILABLE", describe(error));
        await sleep(POLL_BACKOFF_MS, this.abort.signal);
      }
    }
  }

  async receive(secretToken: string, body: string): Promise<void> {
    const expected = Buffer.from(this.webhookSecret);
    const given = Buffer.from(secretToken);
    const me = this.me;
    if (
      this.context.config.mode !== "webhook" ||
      this.state !== "connected" ||
      !me ||
      given.length !== expected.length ||
      !timingSafeEqual(given, expected)
    ) {
      throw new AppError(
        "UNAUTHORIZED",
        "The update's X-Telegram-Bot-Api-Secret-Token does not match this agent's.",
      );
    }
    let update: Update;
    try {
      update = JSON.parse(body) as Update;
    } catch {
      throw new AppError("INVALID_REQUEST", "The update must be a JSON Telegram Update.");
    }
    const message = update.message;
    await this.once(message ? `${message.chat.id}:${message.message_id}` : "", () => this.handle(me, update));
  }

  async post(roomId: string, reply: string, messageKey: string): Promise<void> {
    const chatId = roomId.slice("telegram:".length);
    await this.deliverUnasked(messageKey, reply, telegramPost(this.api, chatId));
  }

  /** Runs a long poll while renewing the lease; losing the lease ends the poll. */
  private async withLease<T>(key: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const poll = new AbortController();
    const onStop = () => poll.abort();
    this.abort.signal.addEventListener("abort", onStop);
    const renew = setInterval(() => {
      this.context.store.acquireLease(key, this.context.holder, this.leaseMs).then(
        (held) => {
          if (!held) poll.abort();
        },
        () => poll.abort(),
      );
    }, this.leaseMs / 3);
    try {
      return await work(poll.signal);
    } finally {
      clearInterval(renew);
      this.abort.signal.removeEventListener("abort", onStop);
    }
  }

  private async handle(me: UserFromGetMe, update: Update): Promise<void> {
    const message = update.message;
    const text = message?.text;
    if (!message || !text) return;
    const chatId = String(message.chat.id);
    await this.answer(
      {
        direct: message.chat.type === "private",
        addressed: mentions(message, me),
        fromBot: message.from?.is_bot === true,
        chatId,
      },
      () => ({
        text: withoutMention(text, me),
        userId: `telegram:${message.from?.id ?? chatId}`,
        roomId: `telegram:${chatId}`,
        source: {
          platform: "telegram",
          chatId,
          messageId: String(message.message_id),
          username: message.from?.username ?? null,
        },
        messageKey: `telegram:${me.id}:${chatId}:${message.message_id}`,
      }),
      telegramReply(this.api, message),
      () => this.keepTyping(message.chat.id),
    );
  }

  private keepTyping(chatId: number): { stop(): void } {
    const send = () => {
      this.api.sendChatAction(chatId, "typing").catch(() => {
        // The indicator is a courtesy: its failure never holds up the reply.
      });
    };
    send();
    const timer = setInterval(send, TYPING_EVERY_MS);
    return { stop: () => clearInterval(timer) };
  }
}

/** Whether a group message is meant for the bot: it names the bot, or replies to one of its messages. */
function mentions(message: Message, me: UserFromGetMe): boolean {
  if (message.reply_to_message?.from?.id === me.id) return true;
  const text = message.text ?? "";
  return (message.entities ?? []).some(
    (entity) =>
      (entity.type === "mention" &&
        text.slice(entity.offset, entity.offset + entity.length).toLowerCase() ===
          `@${me.username.toLowerCase()}`) ||
      (entity.type === "text_mention" && entity.user.id === me.id),
  );
}

/** The text without the bot's @name, which means nothing to the model. */
function withoutMention(text: string, me: UserFromGetMe): string {
  const stripped = text.replace(new RegExp(`@${me.username}\\b`, "gi"), "").trim();
  return stripped.length > 0 ? stripped : text;
}
