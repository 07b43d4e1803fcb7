import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

/** A message a fake user sends where the bot can read it. */
export interface FakeDiscordMessage {
  channelId: string;
  /** Absent for a DM. */
  guildId?: string;
  author?: { id: string; username?: string; bot?: boolean };
  content: string;
  /** Mentions the bot (`<@id>` at the start of the content and in `mentions`). */
  mentionBot?: boolean;
  /** Replies to this message of the bot's. */
  replyToBot?: string;
}

export interface DiscordPost {
  token: string;
  channelId: string;
  content: string;
  /** The message it replies to (its `message_reference`). */
  replyTo: string | undefined;
}

interface Bot {
  id: string;
  username: string;
  guilds: Map<string, string[]>;
  /** IDENTIFY with this token is closed 4004 although REST takes it. */
  gatewayRejects: boolean;
}

interface Session {
  id: string;
  token: string;
  seq: number;
  /** Every dispatch sent in this session, replayed after the sequence a RESUME names. */
  log: { s: number; t: string; d: unknown }[];
  socket: WebSocket | undefined;
  /** The next RESUME replays from here instead of the client's sequence (a replay of what it already saw). */
  replayFrom: number | undefined;
}

export interface FakeDiscord {
  /** DISCORD_API_URL: the REST root, as discord.js's `rest.api` (the version is appended to it). */
  url: string;
  /** DISCORD_GATEWAY_URL: the WebSocket gateway. */
  gatewayUrl: string;
  /** Makes a token REST and the gateway accept, for a bot user of that name; its user id. */
  addBot(token: string, username: string): { id: string };
  /** Puts the bot in a guild with these text channels (sent as GUILD_CREATE after READY). */
  addGuild(token: string, guildId: string, channelIds: string[]): void;
  /** REST takes the token, the gateway closes its IDENTIFY with 4004 (Authentication failed); or no longer. */
  rejectGateway(token: string, rejects?: boolean): void;
  /** A user's message, dispatched as MESSAGE_CREATE in the bot's session (kept for a resume if disconnected). */
  send(token: string, message: FakeDiscordMessage): { messageId: string };
  posts(token?: string): DiscordPost[];
  /** Channels the bot showed typing in. */
  typing(token: string): string[];
  /** Open gateway connections of the token that identified or resumed. */
  sessions(token: string): number;
  /** Gateway opcodes the token's connections sent (2 IDENTIFY, 6 RESUME, 1 HEARTBEAT). */
  received(token: string): { op: number; d: unknown }[];
  /**
   * Closes the bot's connection with a resumable code (4000); its next RESUME is answered by replaying the
   * dispatches after `replayFrom` (default: the sequence the client names), then RESUMED, or, when the session is
   * `forgotten`, by INVALID SESSION (not resumable), so the client identifies afresh.
   */
  disconnect(token: string, options?: { replayFrom?: number; forgotten?: boolean }): void;
  /** The sequence of the bot's last dispatch. */
  sequence(token: string): number;
  /** The next `count` message posts are answered 429 with `Retry-After: retryAfterSeconds`. */
  rateLimit(retryAfterSeconds: number, count?: number): void;
  /** Every message post, when it came and how it was answered. */
  calls(): { at: number; status: number }[];
  close(): Promise<void>;
}

const HEARTBEAT_INTERVAL_MS = 2_000;
const OP = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  RESUME: 6,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

/**
 * A local Discord: the REST routes the connector uses (`GET /gateway/bot`, `GET /users/@me`,
 * `POST /channels/{id}/messages`, `POST /channels/{id}/typing`, 401 for unknown tokens, 429 with Retry-After), and a
 * WebSocket gateway speaking Discord's opcodes: HELLO, IDENTIFY → READY (session_id, resume_gateway_url) and
 * GUILD_CREATE, HEARTBEAT → HEARTBEAT_ACK, DISPATCH with sequence numbers, RESUME → replay and RESUMED (INVALID
 * SESSION for an unknown session), and close 4004 for a rejected token.
 */
export async function startFakeDiscord(): Promise<FakeDiscord> {
  const bots = new Map<string, Bot>();
  const sessions = new Map<string, Session>();
  const received = new Map<string, { op: number; d: unknown }[]>();
  const posts: DiscordPost[] = [];
  const typing: { token: string; channelId: string }[] = [];
  const calls: { at: number; status: number }[] = [];
  let limit: { retryAfter: number; count: number } | undefined;
  let nextId = 900_000_000_000_000_000n;
  const snowflake = () => String(++nextId);
  const open = new Set<WebSocket>();

  const server = createServer((request, response) => {
    void rest(request, response).catch((error: unknown) => {
      json(response, 500, { message: String(error), code: 0 });
    });
  });
  const gateway = new WebSocketServer({ server, path: "/gateway" });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const gatewayUrl = `ws://127.0.0.1:${port}/gateway`;

  const botUser = (bot: Bot) => ({
    id: bot.id,
    username: bot.username,
    discriminator: "0",
    global_name: null,
    avatar: null,
    bot: true,
  });

  async function rest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? "/", "http://fake").pathname.replace(/^\/api\/v\d+/, "");
    const body = await readBody(request);
    const token = (request.headers.authorization ?? "").replace(/^Bot /, "");
    const bot = bots.get(token);
    if (!bot) return json(response, 401, { message: "401: Unauthorized", code: 0 });
    if (request.method === "GET" && path === "/users/@me") return json(response, 200, botUser(bot));
    if (request.method === "GET" && path === "/gateway/bot") {
      return json(response, 200, {
        // Discord's own address: the connector is pointed at the fake by DISCORD_GATEWAY_URL.
        url: "wss://gateway.discord.gg",
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 60_000, max_concurrency: 1 },
      });
    }
    const typed = /^\/channels\/(\d+)\/typing$/.exec(path);
    if (request.method === "POST" && typed) {
      typing.push({ token, channelId: typed[1] ?? "" });
      response.writeHead(204).end();
      return;
    }
    const posted = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (request.method === "POST" && posted) {
      const channelId = posted[1] ?? "";
      if (limit && limit.count > 0) {
        limit.count--;
        calls.push({ at: Date.now(), status: 429 });
        response.setHeader("retry-after", String(limit.retryAfter));
        response.setHeader("x-ratelimit-scope", "user");
        return json(response, 429, {
          message: "You are being rate limited.",
          retry_after: limit.retryAfter,
          global: false,
        });
      }
      calls.push({ at: Date.now(), status: 200 });
      const sent = JSON.parse(body) as { content?: string; message_reference?: { message_id?: string } };
      const replyTo = sent.message_reference?.message_id;
      posts.push({ token, channelId, content: sent.content ?? "", replyTo });
      return json(response, 200, {
        ...messageObject(snowflake(), channelId, botUser(bot), sent.content ?? ""),
        ...(replyTo ? { type: 19, message_reference: { message_id: replyTo, channel_id: channelId } } : {}),
      });
    }
    json(response, 404, { message: "404: Not Found", code: 0 });
  }

  gateway.on("connection", (socket) => {
    open.add(socket);
    let token: string | undefined;
    socket.on("close", () => {
      open.delete(socket);
      for (const session of sessions.values()) if (session.socket === socket) session.socket = undefined;
    });
    send(socket, { op: OP.HELLO, d: { heartbeat_interval: HEARTBEAT_INTERVAL_MS }, s: null, t: null });
    socket.on("message", (data) => {
      const payload = JSON.parse(String(data)) as { op: number; d: Record<string, unknown> | null };
      const named = (payload.d?.token as string | undefined) ?? token;
      if (named) received.set(named, [...(received.get(named) ?? []), { op: payload.op, d: payload.d }]);
      switch (payload.op) {
        case OP.HEARTBEAT:
          send(socket, { op: OP.HEARTBEAT_ACK, d: null, s: null, t: null });
          return;
        case OP.IDENTIFY: {
          token = String(payload.d?.token ?? "");
          const bot = bots.get(token);
          if (!bot || bot.gatewayRejects) {
            socket.close(4004, "Authentication failed.");
            return;
          }
          const session: Session = {
            id: snowflake(),
            token,
            seq: 0,
            log: [],
            socket,
            replayFrom: undefined,
          };
          for (const [key, old] of sessions) if (old.token === token) sessions.delete(key);
          sessions.set(session.id, session);
          dispatch(session, "READY", {
            v: 10,
            user: botUser(bot),
            guilds: [...bot.guilds.keys()].map((id) => ({ id, unavailable: true })),
            session_id: session.id,
            resume_gateway_url: gatewayUrl,
            shard: [0, 1],
            application: { id: bot.id, flags: 0 },
          });
          for (const [guildId, channels] of bot.guilds)
            dispatch(session, "GUILD_CREATE", guild(guildId, channels));
          return;
        }
        case OP.RESUME: {
          const session = sessions.get(String(payload.d?.session_id ?? ""));
          token = String(payload.d?.token ?? "");
          if (!session || session.token !== token) {
            send(socket, { op: OP.INVALID_SESSION, d: false, s: null, t: null });
            return;
          }
          session.socket = socket;
          const from = session.replayFrom ?? Number(payload.d?.seq ?? 0);
          session.replayFrom = undefined;
          for (const event of session.log) {
            if (event.s > from) send(socket, { op: OP.DISPATCH, ...event });
          }
          dispatch(session, "RESUMED", null);
          return;
        }
        default:
          socket.close(4001, "Unknown opcode.");
      }
    });
  });

  function guild(id: string, channels: string[]) {
    return {
      id,
      name: `Guild ${id}`,
      icon: null,
      owner_id: "1",
      unavailable: false,
      member_count: 2,
      large: false,
      joined_at: new Date().toISOString(),
      features: [],
      roles: [],
      emojis: [],
      stickers: [],
      members: [],
      presences: [],
      voice_states: [],
      threads: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
      channels: channels.map((channelId, position) => ({
        id: channelId,
        type: 0,
        name: `channel-${channelId}`,
        guild_id: id,
        position,
        permission_overwrites: [],
      })),
    };
  }

  function dispatch(session: Session, t: string, d: unknown): void {
    const event = { s: ++session.seq, t, d };
    session.log.push(event);
    if (session.socket) send(session.socket, { op: OP.DISPATCH, ...event });
  }

  function sessionOf(token: string): Session | undefined {
    return [...sessions.values()].find((session) => session.token === token);
  }

  function botOf(token: string): Bot {
    const bot = bots.get(token);
    if (!bot) throw new Error(`no fake Discord bot for ${token}`);
    return bot;
  }

  return {
    url: `http://127.0.0.1:${port}/api`,
    gatewayUrl,
    addBot(token, username) {
      const id = snowflake();
      bots.set(token, { id, username, guilds: new Map(), gatewayRejects: false });
      return { id };
    },
    addGuild(token, guildId, channelIds) {
      botOf(token).guilds.set(guildId, channelIds);
    },
    rejectGateway(token, rejects = true) {
      botOf(token).gatewayRejects = rejects;
    },
    send(token, message) {
      const bot = botOf(token);
      const session = sessionOf(token);
      if (!session) throw new Error(`the bot of ${token} has no gateway session`);
      const messageId = snowflake();
      const author = message.author ?? { id: "4242", username: "ada" };
      const me = botUser(bot);
      dispatch(session, "MESSAGE_CREATE", {
        ...messageObject(
          messageId,
          message.channelId,
          {
            id: author.id,
            username: author.username ?? `user${author.id}`,
            discriminator: "0",
            global_name: null,
            avatar: null,
            ...(author.bot ? { bot: true } : {}),
          },
          message.mentionBot ? `<@${bot.id}> ${message.content}` : message.content,
        ),
        ...(message.guildId ? { guild_id: message.guildId } : {}),
        channel_type: message.guildId ? 0 : 1,
        mentions: message.mentionBot ? [me] : [],
        ...(message.replyToBot
          ? {
              type: 19,
              message_reference: { message_id: message.replyToBot, channel_id: message.channelId },
              referenced_message: messageObject(
                message.replyToBot,
                message.channelId,
                me,
                "an earlier answer",
              ),
            }
          : {}),
      });
      return { messageId };
    },
    posts: (token) => posts.filter((post) => token === undefined || post.token === token),
    typing: (token) => typing.filter((entry) => entry.token === token).map((entry) => entry.channelId),
    sessions: (token) => [...sessions.values()].filter((s) => s.token === token && s.socket).length,
    received: (token) => received.get(token) ?? [],
    disconnect(token, options = {}) {
      const session = sessionOf(token);
      if (!session?.socket) throw new Error(`the bot of ${token} is not connected`);
      session.replayFrom = options.replayFrom;
      session.socket.close(4000, "Unknown error.");
      session.socket = undefined;
      if (options.forgotten) sessions.delete(session.id);
    },
    sequence: (token) => sessionOf(token)?.seq ?? 0,
    rateLimit(retryAfterSeconds, count = 1) {
      limit = { retryAfter: retryAfterSeconds, count };
    },
    calls: () => calls,
    async close() {
      for (const socket of open) socket.terminate();
      await new Promise<void>((resolve) => gateway.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A message as REST and the gateway show it, of the default type (0) and without mentions. */
function messageObject(id: string, channelId: string, author: unknown, content: string) {
  return {
    id,
    type: 0,
    channel_id: channelId,
    author,
    content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
  };
}

function send(socket: WebSocket, payload: unknown): void {
  socket.send(JSON.stringify(payload));
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
