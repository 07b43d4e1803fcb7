import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A message a fake user sends the bot. */
export interface FakeTelegramMessage {
  chat: { id: number; type: "private" | "group" | "supergroup" };
  from?: { id: number; is_bot?: boolean; username?: string };
  text: string;
  /** Adds a mention entity for `@<bot username>` found in the text. */
  mentionBot?: boolean;
  /** The message replies to one of the bot's. */
  replyToBot?: boolean;
}

export interface SentMessage {
  token: string;
  chatId: number;
  /** The text as the chat shows it: with `parse_mode: "HTML"`, without its tags and entities. */
  text: string;
  replyTo: number | undefined;
}

/** A sendMessage call as it arrived. */
export interface SendMessageCall {
  token: string;
  text: string;
  parseMode: string | undefined;
  /** Answered 400 for its markup. */
  refused: boolean;
}

interface Bot {
  id: number;
  username: string;
  updates: { update_id: number; message: Record<string, unknown> }[];
  nextUpdateId: number;
  nextMessageId: number;
  waiters: (() => void)[];
  polls: number;
  active: number;
  webhook: { url: string; secretToken: string | undefined } | undefined;
}

export interface FakeTelegram {
  /** What grammY's `apiRoot` (TELEGRAM_API_URL) is set to. */
  url: string;
  /** Makes a token the API accepts, for a bot of that username. */
  addBot(token: string, username: string): { id: number };
  /** A user's message, delivered by the next getUpdates; answers its update id and message id. */
  send(token: string, message: FakeTelegramMessage): { updateId: number; messageId: number };
  sent(token?: string): SentMessage[];
  /** Every sendMessage call, refused ones included, with its text and parse mode as sent. */
  sendCalls(token?: string): SendMessageCall[];
  /** The next `count` sendMessage calls with a parse mode are refused 400 "can't parse entities". */
  refuseMarkup(count?: number): void;
  /**
   * The next `count` sendMessage calls are taken (the chat shows them) but answered only `ms` later: a sender that
   * dies meanwhile never learns its message went out.
   */
  holdSendAnswers(ms: number, count?: number): void;
  chatActions(token?: string): { token: string; chatId: number; action: string }[];
  /** getUpdates calls a bot's token received. */
  polls(token: string): number;
  /** getUpdates calls of a bot's token waiting for news right now. */
  activePolls(token: string): number;
  /** Updates not yet confirmed by an offset past them. */
  pending(token: string): number;
  webhook(token: string): { url: string; secretToken: string | undefined } | undefined;
  /** The next `count` calls of `method` are answered 429 with `retry_after` seconds. */
  rateLimit(method: string, retryAfterSeconds: number, count?: number): void;
  /** When each call of `method` was answered 429, and when the call after it came. */
  calls(method: string): { at: number; status: number }[];
  close(): Promise<void>;
}

/**
 * A local Telegram Bot API speaking its wire format (`POST /bot<token>/<method>`, JSON in, `{ok, result}` or
 * `{ok: false, error_code, description, parameters}` out) for the methods the connector uses: getMe, getUpdates
 * (offset confirms, timeout long-polls), sendMessage (HTML parse mode checked as Telegram does: known tags,
 * balanced, only its four named entities), sendChatAction, setWebhook and deleteWebhook. Unknown tokens are answered
 * 401 as Telegram does.
 */
export async function startFakeTelegram(): Promise<FakeTelegram> {
  const bots = new Map<string, Bot>();
  const sent: SentMessage[] = [];
  const sendCalls: SendMessageCall[] = [];
  let refuseMarkup = 0;
  let hold = { ms: 0, count: 0 };
  const actions: { token: string; chatId: number; action: string }[] = [];
  const limits = new Map<string, { retryAfter: number; count: number }>();
  const log = new Map<string, { at: number; status: number }[]>();
  let nextBotId = 7000;
  let nextUserMessageId = 100;
  const open = new Set<ServerResponse>();

  const server = createServer((request, response) => {
    open.add(response);
    response.on("close", () => open.delete(response));
    void handle(request, response).catch((error: unknown) => {
      reply(response, 500, { ok: false, error_code: 500, description: String(error) });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.url ?? "");
    const body = await readJson(request);
    if (!match) return reply(response, 404, { ok: false, error_code: 404, description: "Not Found" });
    const token = decodeURIComponent(match[1] ?? "");
    const method = match[2] ?? "";
    const calls = log.get(method) ?? [];
    log.set(method, calls);
    const bot = bots.get(token);
    if (!bot) {
      calls.push({ at: Date.now(), status: 401 });
      return reply(response, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    }
    const limit = limits.get(method);
    if (limit && limit.count > 0) {
      limit.count--;
      calls.push({ at: Date.now(), status: 429 });
      return reply(response, 429, {
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${limit.retryAfter}`,
        parameters: { retry_after: limit.retryAfter },
      });
    }
    calls.push({ at: Date.now(), status: 200 });
    switch (method) {
      case "getMe":
        return ok(response, { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username });
      case "getUpdates":
        return getUpdates(bot, body, response);
      case "sendMessage": {
        const chatId = Number(body.chat_id);
        const replyParameters = body.reply_parameters as { message_id?: number } | undefined;
        const parseMode = typeof body.parse_mode === "string" ? body.parse_mode : undefined;
        const shown = parseMode === undefined ? { text: String(body.text) } : parseMarkup(String(body.text));
        const refused = parseMode !== undefined && (refuseMarkup > 0 || "error" in shown);
        sendCalls.push({ token, text: String(body.text), parseMode, refused });
        if (refused) {
          refuseMarkup = Math.max(0, refuseMarkup - 1);
          const why = "error" in shown ? shown.error : "unsupported start tag";
          return reply(response, 400, {
            ok: false,
            error_code: 400,
            description: `Bad Request: can't parse entities: ${why}`,
          });
        }
        if (!("text" in shown) || shown.text.trim() === "") {
          return reply(response, 400, {
            ok: false,
            error_code: 400,
            description: "Bad Request: message text is empty",
          });
        }
        sent.push({ token, chatId, text: shown.text, replyTo: replyParameters?.message_id });
        if (hold.count > 0) {
          hold.count--;
          await new Promise((resolve) => setTimeout(resolve, hold.ms));
        }
        return ok(response, {
          message_id: bot.nextMessageId++,
          date: Math.floor(Date.now() / 1000),
          chat: { id: chatId, type: chatId > 0 ? "private" : "group" },
          from: { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username },
          text: shown.text,
        });
      }
      case "sendChatAction":
        actions.push({ token, chatId: Number(body.chat_id), action: String(body.action) });
        return ok(response, true);
      case "setWebhook":
        bot.webhook = {
          url: String(body.url),
          secretToken: typeof body.secret_token === "string" ? body.secret_token : undefined,
        };
        return ok(response, true);
      case "deleteWebhook":
        bot.webhook = undefined;
        return ok(response, true);
      default:
        return reply(response, 404, {
          ok: false,
          error_code: 404,
          description: "Not Found: method not found",
        });
    }
  }

  async function getUpdates(
    bot: Bot,
    body: Record<string, unknown>,
    response: ServerResponse,
  ): Promise<void> {
    bot.polls++;
    if (bot.webhook) {
      return reply(response, 409, {
        ok: false,
        error_code: 409,
        description: "Conflict: can't use getUpdates method while webhook is active",
      });
    }
    const offset = typeof body.offset === "number" ? body.offset : undefined;
    // An offset confirms every update before it: Telegram forgets them.
    if (offset !== undefined) bot.updates = bot.updates.filter((update) => update.update_id >= offset);
    const timeoutSeconds = typeof body.timeout === "number" ? body.timeout : 0;
    if (bot.updates.length === 0 && timeoutSeconds > 0) {
      bot.active++;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutSeconds * 1000);
        function done() {
          clearTimeout(timer);
          bot.waiters = bot.waiters.filter((waiter) => waiter !== done);
          resolve();
        }
        bot.waiters.push(done);
        response.on("close", done);
      });
      bot.active--;
    }
    if (response.destroyed || response.writableEnded) return;
    ok(response, bot.updates.slice(0, typeof body.limit === "number" ? body.limit : 100));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const botOf = (token: string): Bot => {
    const bot = bots.get(token);
    if (!bot) throw new Error(`no fake bot with token ${token}`);
    return bot;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    addBot(token, username) {
      const bot: Bot = {
        id: nextBotId++,
        username,
        updates: [],
        nextUpdateId: 1,
        nextMessageId: 1,
        waiters: [],
        polls: 0,
        active: 0,
        webhook: undefined,
      };
      bots.set(token, bot);
      return { id: bot.id };
    },
    send(token, message) {
      const bot = botOf(token);
      const messageId = nextUserMessageId++;
      const from = message.from ?? { id: message.chat.id > 0 ? message.chat.id : 4242 };
      const mention = `@${bot.username}`;
      const at = message.text.indexOf(mention);
      const update = {
        update_id: bot.nextUpdateId++,
        message: {
          message_id: messageId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: message.chat.id, type: message.chat.type },
          from: { is_bot: false, first_name: "User", ...from },
          text: message.text,
          ...(message.mentionBot && at >= 0
            ? { entities: [{ type: "mention", offset: at, length: mention.length }] }
            : {}),
          ...(message.replyToBot
            ? {
                reply_to_message: {
                  message_id: 1,
                  date: 0,
                  chat: message.chat,
                  from: { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username },
                  text: "earlier",
                },
              }
            : {}),
        },
      };
      bot.updates.push(update);
      for (const waiter of [...bot.waiters]) waiter();
      return { updateId: update.update_id, messageId };
    },
    sent: (token) => sent.filter((message) => token === undefined || message.token === token),
    sendCalls: (token) => sendCalls.filter((call) => token === undefined || call.token === token),
    refuseMarkup: (count = 1) => {
      refuseMarkup = count;
    },
    holdSendAnswers: (ms, count = 1) => {
      hold = { ms, count };
    },
    chatActions: (token) => actions.filter((action) => token === undefined || action.token === token),
    polls: (token) => botOf(token).polls,
    activePolls: (token) => botOf(token).active,
    pending: (token) => botOf(token).updates.length,
    webhook: (token) => botOf(token).webhook,
    rateLimit(method, retryAfterSeconds, count = 1) {
      limits.set(method, { retryAfter: retryAfterSeconds, count });
    },
    calls: (method) => [...(log.get(method) ?? [])],
    async close() {
      for (const bot of bots.values()) for (const waiter of [...bot.waiters]) waiter();
      for (const response of open) response.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function ok(response: ServerResponse, result: unknown): void {
  reply(response, 200, { ok: true, result });
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The tags Telegram's HTML parse mode knows. */
const TELEGRAM_TAGS = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "span",
  "tg-spoiler",
  "a",
  "code",
  "pre",
  "blockquote",
  "tg-emoji",
]);
const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

/** Telegram's reading of an HTML-mode text: the shown text, or why it refuses it. */
function parseMarkup(html: string): { text: string } | { error: string } {
  const open: string[] = [];
  let text = "";
  const token = /<(\/?)([a-z-]+)((?:\s+[a-z-]+(?:="[^"]*")?)*)\s*>|&(#x?[0-9a-f]+|[a-z]+);|[<>]/giy;
  let at = 0;
  while (at < html.length) {
    token.lastIndex = at;
    const match = token.exec(html);
    if (!match || match.index !== at) {
      text += html[at];
      at++;
      continue;
    }
    at = token.lastIndex;
    const [whole, closing, tag, , entity] = match;
    if (whole === "<" || whole === ">") {
      if (whole === "<") return { error: `unexpected "<" at byte offset ${match.index}` };
      text += ">";
    } else if (entity !== undefined) {
      if (entity.startsWith("#")) {
        const code = entity.startsWith("#x") ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
        text += String.fromCodePoint(code);
      } else if (NAMED_ENTITIES[entity.toLowerCase()] !== undefined) {
        text += NAMED_ENTITIES[entity.toLowerCase()];
      } else {
        return { error: `unsupported HTML entity "&${entity};" at byte offset ${match.index}` };
      }
    } else {
      const name = (tag ?? "").toLowerCase();
      if (!TELEGRAM_TAGS.has(name))
        return { error: `unsupported start tag "${name}" at byte offset ${match.index}` };
      if (closing) {
        if (open.pop() !== name)
          return { error: `unmatched end tag at byte offset ${match.index}, expected "</${name}>"` };
      } else {
        open.push(name);
      }
    }
  }
  if (open.length > 0) return { error: `can't find end tag corresponding to start tag "${open.at(-1)}"` };
  return { text };
}
