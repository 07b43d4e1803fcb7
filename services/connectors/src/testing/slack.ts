import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { slackSignature } from "../slack/connector.js";

export interface SlackPost {
  token: string;
  channel: string;
  text: string;
  threadTs: string | undefined;
  /** `false` when the post asked Slack not to format its text; absent when it left formatting on. */
  mrkdwn?: false;
}

/** An `assistant.threads.setStatus` call: the "is thinking…" shown under a thread. */
export interface SlackStatus {
  token: string;
  channel: string;
  threadTs: string;
  status: string;
}

export interface FakeSlack {
  /** What the WebClient's `slackApiUrl` (SLACK_API_URL) is set to. */
  url: string;
  /** Makes a bot token auth.test accepts, for a bot user of that id. */
  addBot(token: string, userId: string): void;
  posts(token?: string): SlackPost[];
  statuses(token?: string): SlackStatus[];
  /** The next `count` calls of `method` are answered 429 with `Retry-After` seconds. */
  rateLimit(method: string, retryAfterSeconds: number, count?: number): void;
  /** Each call of `method`: when, and its HTTP status. */
  calls(method: string): { at: number; status: number }[];
  close(): Promise<void>;
}

/**
 * A local Slack Web API speaking its wire format (`POST /api/<method>`, form or JSON in, a bearer token, `{ok: true,
 * ...}` or `{ok: false, error}` out, 429 with `Retry-After` when rate limited) for the methods the connector
 * uses: auth.test, chat.postMessage and assistant.threads.setStatus. Unknown tokens are answered `invalid_auth`, as Slack does.
 */
export async function startFakeSlack(): Promise<FakeSlack> {
  const bots = new Map<string, string>();
  const posts: SlackPost[] = [];
  const statuses: SlackStatus[] = [];
  const limits = new Map<string, { retryAfter: number; count: number }>();
  const log = new Map<string, { at: number; status: number }[]>();
  let nextTs = 1_700_000_000;

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      reply(response, 500, { ok: false, error: String(error) });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = (request.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
    const raw = await readBody(request);
    const params: Record<string, unknown> = (request.headers["content-type"] ?? "").includes("json")
      ? (JSON.parse(raw || "{}") as Record<string, unknown>)
      : Object.fromEntries(new URLSearchParams(raw));
    const calls = log.get(method) ?? [];
    log.set(method, calls);
    const limit = limits.get(method);
    if (limit && limit.count > 0) {
      limit.count--;
      calls.push({ at: Date.now(), status: 429 });
      response.setHeader("retry-after", String(limit.retryAfter));
      return reply(response, 429, { ok: false, error: "ratelimited" });
    }
    calls.push({ at: Date.now(), status: 200 });
    const token = (request.headers.authorization ?? "").replace(/^Bearer /, "") || String(params.token ?? "");
    const userId = bots.get(token);
    if (!token) return reply(response, 200, { ok: false, error: "not_authed" });
    if (!userId) return reply(response, 200, { ok: false, error: "invalid_auth" });
    switch (method) {
      case "auth.test":
        return reply(response, 200, { ok: true, user_id: userId, bot_id: `B${userId}`, team_id: "T0001" });
      case "chat.postMessage": {
        const channel = String(params.channel ?? "");
        const text = String(params.text ?? "");
        if (!channel || !text) return reply(response, 200, { ok: false, error: "invalid_arguments" });
        const threadTs = params.thread_ts === undefined ? undefined : String(params.thread_ts);
        const mrkdwn = params.mrkdwn === false || params.mrkdwn === "false" ? { mrkdwn: false as const } : {};
        posts.push({ token, channel, text, threadTs, ...mrkdwn });
        return reply(response, 200, { ok: true, channel, ts: `${nextTs++}.000100` });
      }
      case "assistant.threads.setStatus": {
        const channel = String(params.channel_id ?? "");
        const threadTs = String(params.thread_ts ?? "");
        if (!channel || !threadTs || params.status === undefined) {
          return reply(response, 200, { ok: false, error: "invalid_arguments" });
        }
        statuses.push({ token, channel, threadTs, status: String(params.status) });
        return reply(response, 200, { ok: true });
      }
      default:
        return reply(response, 200, { ok: false, error: "unknown_method" });
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/`,
    addBot: (token, userId) => void bots.set(token, userId),
    posts: (token) => posts.filter((post) => token === undefined || post.token === token),
    statuses: (token) => statuses.filter((status) => token === undefined || status.token === token),
    rateLimit: (method, retryAfter, count = 1) => void limits.set(method, { retryAfter, count }),
    calls: (method) => [...(log.get(method) ?? [])],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The headers Slack signs an Events API request with, for a body and a signing secret. */
export function signSlackRequest(
  signingSecret: string,
  body: string,
  at: number = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const timestamp = String(at);
  return {
    "x-slack-request-timestamp": timestamp,
    "x-slack-signature": slackSignature(signingSecret, timestamp, body),
  };
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf-8");
}
