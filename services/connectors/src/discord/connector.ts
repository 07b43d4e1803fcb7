import {
  type APIUser,
  Client,
  DiscordAPIError,
  DiscordjsErrorCodes,
  Events,
  GatewayIntentBits,
  type Message,
  Partials,
  REST,
  Routes,
  SimpleShardingStrategy,
} from "discord.js";
import {
  type ConnectorContext,
  describe,
  PlatformConnector,
  type PlatformDriver,
  sleep,
} from "../platform.js";
import { discordPost, discordReply } from "./reply.js";

export interface DiscordOptions {
  /** The REST API's root (DISCORD_API_URL), without the version; Discord's own by default. */
  apiUrl?: string | undefined;
  /** The gateway (DISCORD_GATEWAY_URL); by default the one Discord names in `GET /gateway/bot`. */
  gatewayUrl?: string | undefined;
  /** How long a gateway session's lease on a bot token holds without renewal; another process takes over after it. */
  leaseMs?: number;
}

const DEFAULT_LEASE_MS = 10_000;
/** Discord shows "typing…" for about 10 s per call. */
const TYPING_EVERY_MS = 8_000;
/** Waits after a failed connection, so an outage is not hammered. */
const RECONNECT_BACKOFF_MS = 2_000;
/** Gateway close codes: the token is not a bot's (4004); an intent the application has not enabled (4014). */
const AUTHENTICATION_FAILED = 4004;
const DISALLOWED_INTENTS = 4014;

/** Discord through discord.js: a gateway session for messages, REST for replies and typing. */
export function discordDriver(options: DiscordOptions = {}): PlatformDriver {
  return { type: "discord", start: (context) => new DiscordConnector(context, options) };
}

/** How one gateway session ended. */
type SessionEnd = "stopped" | "lease lost" | "dropped" | "rejected" | "refused";

class DiscordConnector extends PlatformConnector {
  private readonly token: string;
  private readonly leaseMs: number;
  private me: APIUser | undefined;
  /** Messages being answered: the session ends only after each is answered or given up. */
  private readonly handling = new Set<Promise<void>>();
  /** The gateway session's client while this process holds one: schedules' replies go out through its REST. */
  private live: Client | undefined;

  constructor(
    context: ConnectorContext,
    private readonly options: DiscordOptions,
  ) {
    super(context, "discord");
    this.token = context.secrets.DISCORD_BOT_TOKEN ?? "";
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  protected override async release(): Promise<void> {
    if (this.me) await this.context.store.releaseLease(this.leaseKey(this.me), this.context.holder);
  }

  private leaseKey(me: APIUser): string {
    return `discord:${me.id}`;
  }

  /** A client of the REST API and the gateway, as discord.js builds it, pointed at the configured addresses. */
  private client(): Client {
    const { gatewayUrl, apiUrl } = this.options;
    return new Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.DirectMessages,
        GatewayIntentBits.MessageContent,
      ],
      // DM channels are not cached before their first message: without this their messages are dropped.
      partials: [Partials.Channel],
      rest: apiUrl ? { api: apiUrl } : {},
      ...(gatewayUrl
        ? {
            ws: {
              buildStrategy: (manager) => {
                const fetchGateway = manager.fetchGatewayInformation.bind(manager);
                manager.fetchGatewayInformation = async (force) => ({
                  ...(await fetchGateway(force)),
                  url: gatewayUrl,
                });
                return new SimpleShardingStrategy(manager);
              },
            },
          }
        : {}),
    });
  }

  protected async run(): Promise<void> {
    const { context } = this;
    const rest = new REST(this.options.apiUrl ? { api: this.options.apiUrl } : {}).setToken(this.token);
    const me = await this.identify(
      () => rest.get(Routes.user()) as Promise<APIUser>,
      (error) =>
        error instanceof DiscordAPIError && error.status === 401
          ? {
              client: `Discord rejected the bot token: ${error.message}`,
              agent: `Discord rejected DISCORD_BOT_TOKEN (${error.message}); set the bot's token from the Developer Portal.`,
            }
          : undefined,
      RECONNECT_BACKOFF_MS,
    );
    rest.clearHashSweeper();
    rest.clearHandlerSweeper();
    if (!me) return;
    this.me = me;
    const key = this.leaseKey(me);
    while (!this.stopping) {
      // One gateway session per bot token: the others wait, ready to take over once the holder's lease expires.
      if (!(await context.store.acquireLease(key, context.holder, this.leaseMs))) {
        this.state = "connecting";
        await sleep(this.leaseMs / 4, this.abort.signal);
        continue;
      }
      const end = await this.session(me, key);
      if (end === "rejected" || end === "refused") return;
      if (end === "dropped") await sleep(RECONNECT_BACKOFF_MS, this.abort.signal);
    }
  }

  async post(roomId: string, reply: string, messageKey: string): Promise<void> {
    const client = this.live;
    if (!client) return;
    const posted = this.deliverUnasked(
      messageKey,
      reply,
      discordPost(client.rest, roomId.slice("discord:".length)),
    );
    // The session closes its client only after this is out, as with a message in hand.
    const tracked = posted.catch(() => {});
    this.handling.add(tracked);
    void tracked.finally(() => this.handling.delete(tracked));
    await posted;
  }

  /** Holds one gateway session while this process holds the lease; answers messages until it ends. */
  private async session(me: APIUser, key: string): Promise<SessionEnd> {
    const { context } = this;
    const client = this.client();
    this.live = client;
    let end: SessionEnd | undefined;
    let finish: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const endWith = (why: SessionEnd) => {
      end ??= why;
      finish();
    };
    const onStop = () => endWith("stopped");
    this.abort.signal.addEventListener("abort", onStop);
    const renew = setInterval(() => {
      context.store.acquireLease(key, context.holder, this.leaseMs).then(
        (held) => {
          if (!held) endWith("lease lost");
        },
        () => endWith("lease lost"),
      );
    }, this.leaseMs / 3);

    client.on(Events.MessageCreate, (message) => {
      const handled = this.handle(me, message).catch((error: unknown) => {
        context.logger.warn({ err: error }, "discord message could not be answered");
      });
      this.handling.add(handled);
      void handled.finally(() => this.handling.delete(handled));
    });
    // An `error` event with no listener would end the process; discord.js reconnects by itself after these.
    client.on(Events.Error, (error) => {
      context.logger.warn({ err: error }, "discord client error");
    });
    client.on(Events.ShardReady, () => this.markConnected());
    client.on(Events.ShardResume, () => this.markConnected());
    client.on(Events.ShardReconnecting, () => {
      this.state = "connecting";
    });
    client.on(Events.ShardDisconnect, (event) => {
      // discord.js reconnects by itself except after a close it cannot recover from.
      if (end !== undefined) return;
      if (event.code === AUTHENTICATION_FAILED) {
        this.rejectGatewayToken();
        endWith("rejected");
      } else if (event.code === DISALLOWED_INTENTS) {
        this.intentsRefused();
        endWith("refused");
      } else {
        this.recordError("PLATFORM_UNAVAILABLE", `Discord closed the gateway connection (${event.code}).`);
        endWith("dropped");
      }
    });

    // Not awaited: a stop or a lost lease ends the session even while a connection attempt hangs.
    client.login(this.token).catch((error: unknown) => {
      // A close the shard already reported (4004, 4014) also fails the login: the first account of it stands.
      if (end !== undefined || this.stopping) return;
      if (isCode(error, DiscordjsErrorCodes.TokenInvalid)) {
        this.rejectGatewayToken();
        endWith("rejected");
      } else if (isCode(error, DiscordjsErrorCodes.DisallowedIntents)) {
        this.intentsRefused();
        endWith("refused");
      } else {
        this.recordError("PLATFORM_UNAVAILABLE", describe(error));
        context.logger.warn({ err: error }, "discord gateway connection failed; connecting again shortly");
        endWith("dropped");
      }
    });
    await ended;
    clearInterval(renew);
    this.abort.signal.removeEventListener("abort", onStop);
    // No new messages are taken; the ones in hand are answered (through this client's REST) before it closes.
    client.removeAllListeners(Events.MessageCreate);
    this.live = undefined;
    await Promise.all([...this.handling]);
    await client.destroy();
    if (end !== "stopped" && end !== "rejected" && end !== "refused") this.state = "connecting";
    return end ?? "stopped";
  }

  private rejectGatewayToken(): void {
    this.rejectToken({
      client: "Discord's gateway rejected the bot token (4004 Authentication failed).",
      agent:
        "Discord rejected DISCORD_BOT_TOKEN (4004 Authentication failed); set the bot's token from the Developer Portal.",
    });
  }

  private intentsRefused(): void {
    this.fail(
      "DISCORD_INTENTS_DISALLOWED",
      "Discord refused the Message Content intent: enable it under Bot → Privileged Gateway Intents in the Developer Portal.",
    );
  }

  private async handle(me: APIUser, message: Message): Promise<void> {
    const text = message.content;
    if (!text) return;
    const chatId = message.channelId;
    const messageKey = `discord:${me.id}:${chatId}:${message.id}`;
    // A RESUME replays what the gateway thinks was not received: a replay of a message in hand is dropped here,
    // one already answered by the store.
    await this.once(messageKey, () =>
      this.answer(
        {
          direct: !message.inGuild(),
          addressed: message.mentions.users.has(me.id) || message.mentions.repliedUser?.id === me.id,
          fromBot: message.author.bot || message.author.id === me.id,
          chatId,
        },
        () => ({
          text: withoutMention(text, me),
          userId: `discord:${message.author.id}`,
          roomId: `discord:${chatId}`,
          source: { platform: "discord", chatId, messageId: message.id, username: message.author.username },
          messageKey,
        }),
        discordReply(message),
        () => this.keepTyping(message),
      ),
    );
  }

  private keepTyping(message: Message): { stop(): void } {
    const send = () => {
      message.client.rest.post(Routes.channelTyping(message.channelId)).catch(() => {
        // The indicator is a courtesy: its failure never holds up the reply.
      });
    };
    send();
    const timer = setInterval(send, TYPING_EVERY_MS);
    return { stop: () => clearInterval(timer) };
  }
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof Error && "code" in error && error.code === code;
}

/** The text without the bot's `<@id>` mention, which means nothing to the model. */
function withoutMention(text: string, me: APIUser): string {
  const stripped = text.replace(new RegExp(`<@!?${me.id}>`, "g"), "").trim();
  return stripped.length > 0 ? stripped : text;
}
