import type { ServerResponse } from "node:http";
import { isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { presentToolCall } from "@agentry/events";
import {
  type BackgroundMessage,
  type Conversation,
  type ExportUserResponse,
  HistoryOrder,
  MessageStatus,
  type PageCursor,
  type Turn,
  TurnRole,
} from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { toAppError } from "../http/errors.js";
import {
  type ListConversationsQuery,
  type ListMessagesQuery,
  listConversationsQuery,
  listMessagesQuery,
  userPath,
} from "../validation/history.js";
import { parseOrThrow } from "../validation/issues.js";
import { presentMemory } from "./memories.js";
import { callerGone, presentReply, toolCallView } from "./messages.js";
import type { HandlerInput, Route } from "./table.js";

/** A stored message as every history route presents it (docs/api/history.md, "Stored messages"). */
export function presentMessage(turn: Turn) {
  const common = {
    id: turn.id,
    agentId: turn.agentId,
    conversationId: turn.conversationId,
    // The default conversation's user and room are stored as "", and shown as the send reply shows them.
    userId: turn.userId || null,
    roomId: turn.roomId || null,
    role: turn.role === TurnRole.ASSISTANT ? ("assistant" as const) : ("user" as const),
    text: turn.text,
  };
  const createdAt = isoTime(turn.createTime);
  if (turn.role !== TurnRole.ASSISTANT) return { ...common, createdAt };
  return {
    ...common,
    model: turn.model,
    modelProvider: turn.modelProvider,
    // Replies stored before the finish reason was kept have none.
    finishReason: turn.finishReason || null,
    usage: {
      inputTokens: turn.usage?.inputTokens ?? 0,
      outputTokens: turn.usage?.outputTokens ?? 0,
      totalTokens: turn.usage?.totalTokens ?? 0,
    },
    latencyMs: turn.latencyMs,
    createdAt,
    ...(turn.toolCalls.length > 0
      ? { toolCalls: turn.toolCalls.map((call) => presentToolCall(toolCallView(call))) }
      : {}),
  };
}

export function presentConversation(conversation: Conversation) {
  return {
    id: conversation.id,
    agentId: conversation.agentId,
    userId: conversation.userId || null,
    roomId: conversation.roomId || null,
    messageCount: conversation.messageCount,
    createdAt: isoTime(conversation.createTime),
    lastMessageAt: isoTime(conversation.lastMessageTime),
  };
}

function isoTime(value: Parameters<typeof timestampDate>[0] | undefined): string {
  return value ? timestampDate(value).toISOString() : new Date(0).toISOString();
}

/**
 * The agent of an agent-scoped route, once it is known to be the caller's: a malformed id is answered without a
 * lookup, and another account's agent exactly like a missing one (the registry scopes its read to the caller's
 * account). Checked before anything else of the request, so nothing about another account's agent is told.
 */
async function callersAgent({ ctx, gateway, principal, rpc }: HandlerInput): Promise<string> {
  const id = ctx.params.agentId ?? "";
  if (!isId("agent", id))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
  const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
  return id;
}

function pageCursor(query: {
  limit: number;
  before?: string | undefined;
  after?: string | undefined;
  order?: "asc" | "desc";
}): Omit<PageCursor, "$typeName"> {
  return {
    limit: query.limit,
    before: query.before ?? "",
    after: query.after ?? "",
    order: query.order === "asc" ? HistoryOrder.ASC : HistoryOrder.DESC,
  };
}

function conversationNotFound(id: string): AppError {
  return new AppError("CONVERSATION_NOT_FOUND", `Conversation ${JSON.stringify(id)} does not exist.`);
}

async function listConversations(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agentId = await callersAgent(input);
  const query: ListConversationsQuery = parseOrThrow(listConversationsQuery, ctx.query, "query parameters");
  const response = await gateway.conversations.listConversations(
    {
      accountId: principal.accountId,
      agentId,
      ...(query.userId !== undefined ? { userId: query.userId } : {}),
      ...(query.roomId !== undefined ? { roomId: query.roomId } : {}),
      page: pageCursor(query),
    },
    rpc,
  );
  ctx.body = {
    success: true,
    data: response.conversations.map(presentConversation),
    pagination: { limit: query.limit, hasMore: response.hasMore },
  };
}

async function listMessages(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agentId = await callersAgent(input);
  const query: ListMessagesQuery = parseOrThrow(listMessagesQuery, ctx.query, "query parameters");
  if (query.conversationId !== undefined && !isId("conversation", query.conversationId)) {
    throw conversationNotFound(query.conversationId);
  }
  const response = await gateway.conversations.listMessages(
    {
      accountId: principal.accountId,
      agentId,
      ...(query.conversationId !== undefined ? { conversationId: query.conversationId } : {}),
      ...(query.userId !== undefined ? { userId: query.userId } : {}),
      ...(query.roomId !== undefined ? { roomId: query.roomId } : {}),
      page: pageCursor(query),
    },
    rpc,
  );
  ctx.body = {
    success: true,
    data: response.messages.map(presentMessage),
    pagination: { limit: query.limit, hasMore: response.hasMore },
  };
}

async function getMessage(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agentId = await callersAgent(input);
  const messageId = ctx.params.messageId ?? "";
  if (!isId("message", messageId)) {
    throw new AppError("MESSAGE_NOT_FOUND", `Message ${JSON.stringify(messageId)} does not exist.`);
  }
  const { message, background } = await gateway.conversations.getMessage(
    { accountId: principal.accountId, agentId, messageId },
    rpc,
  );
  ctx.body = {
    success: true,
    data: background ? presentBackgroundMessage(background) : presentMessage(message!),
  };
}

/**
 * A background message (docs/api/messages-and-streams.md, "Background messages"): the reply object with its
 * `status`; only the ids while pending, the whole reply once completed, the error once failed.
 */
export function presentBackgroundMessage(message: BackgroundMessage) {
  if (message.status === MessageStatus.COMPLETED && message.reply) {
    return { ...presentReply(message.reply), status: "completed" as const };
  }
  const ids = {
    id: message.id,
    agentId: message.agentId,
    userId: message.userId ?? null,
    roomId: message.roomId ?? null,
  };
  if (message.status === MessageStatus.FAILED) {
    return {
      ...ids,
      status: "failed" as const,
      error: { code: message.error?.code ?? "INTERNAL_ERROR", message: message.error?.message ?? "" },
    };
  }
  return { ...ids, status: "pending" as const };
}

async function deleteConversation(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agentId = await callersAgent(input);
  const conversationId = ctx.params.conversationId ?? "";
  if (!isId("conversation", conversationId)) throw conversationNotFound(conversationId);
  const { deletedMessages } = await gateway.conversations.deleteConversation(
    { accountId: principal.accountId, agentId, conversationId },
    rpc,
  );
  ctx.body = {
    success: true,
    data: { id: conversationId, deleted: true, messagesDeleted: deletedMessages },
  };
}

/** The user id of the user routes, decoded from the path; a value no message can carry is refused. */
function userIdOf(input: HandlerInput): string {
  return parseOrThrow(userPath, { userId: input.ctx.params.userId }, "path").userId;
}

async function eraseUser(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const userId = userIdOf(input);
  const { deletedMessages } = await gateway.conversations.eraseUser(
    { accountId: principal.accountId, userId },
    rpc,
  );
  // Then the user's replies the webhooks service was handed, and their delivery log.
  await gateway.webhooks.eraseUserEvents({ accountId: principal.accountId, userId }, rpc);
  ctx.body = { success: true, data: { userId, deleted: true, messagesDeleted: deletedMessages } };
}

/**
 * Streams a user's messages as NDJSON, one page of the ExportUser stream at a time: the next page is read only
 * once the last one has been handed to the socket, so the gateway holds one page whatever the export's size.
 * Nothing is written before the first page has arrived, so a failure to start is an ordinary JSON error; a
 * failure later can only cut the response short (no final chunk), which clients see as an incomplete body.
 */
async function exportUser(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const userId = userIdOf(input);
  const abort = callerGone(input);
  // No deadline for the whole call, which lasts as long as the caller takes to read it; each page has one.
  const pages = gateway.conversations
    .exportUser({ accountId: principal.accountId, userId }, { headers: rpc.headers, signal: abort.signal })
    [Symbol.asyncIterator]();
  const nextPage = async (): Promise<IteratorResult<ExportUserResponse>> => {
    const deadline = setTimeout(() => abort.abort(), gateway.config.RPC_TIMEOUT_MS);
    try {
      return await pages.next();
    } finally {
      clearTimeout(deadline);
    }
  };
  const agents = new ExistingAgents(input);

  try {
    let page = await nextPage();
    if (page.done) {
      ctx.status = 200;
      ctx.type = NDJSON;
      ctx.body = "";
      return;
    }
    ctx.respond = false;
    ctx.status = 200;
    ctx.res.writeHead(200, {
      "Content-Type": NDJSON,
      "Cache-Control": "no-store",
      "X-Accel-Buffering": "no",
    });
    try {
      for (; !page.done; page = await nextPage()) {
        const { messages, memories } = page.value;
        await agents.learn([...messages, ...memories].map((item) => item.agentId));
        let lines = "";
        for (const turn of messages) {
          if (agents.exists(turn.agentId)) lines += `${JSON.stringify(presentMessage(turn))}\n`;
        }
        // The user's memories follow the messages (docs/api/memories.md, "Export and erasure").
        for (const memory of memories) {
          if (agents.exists(memory.agentId)) lines += `${JSON.stringify(presentMemory(memory))}\n`;
        }
        if (lines !== "" && !ctx.res.write(lines)) await drained(ctx.res);
        if (ctx.res.destroyed) return;
      }
      ctx.res.end();
    } catch (error) {
      // A caller that left has nothing to be told; otherwise the cut is the only signal it gets, and the log
      // says why.
      if (ctx.res.destroyed) gateway.logger.info("caller left during an export");
      else gateway.logger.error({ err: toAppError(error).cause ?? error }, "export failed after it started");
      ctx.res.destroy();
    }
  } finally {
    await pages.return?.();
  }
}

const NDJSON = "application/x-ndjson; charset=utf-8";

/**
 * Which agents of the caller's account still exist, asked of the registry once per agent per export: the
 * registry is the source of truth, so messages that an agent's deletion has not purged yet are left out.
 */
class ExistingAgents {
  private readonly known = new Map<string, boolean>();

  constructor(private readonly input: HandlerInput) {}

  async learn(agentIds: Iterable<string>): Promise<void> {
    const { gateway, principal, rpc } = this.input;
    for (const id of new Set(agentIds)) {
      if (this.known.has(id)) continue;
      try {
        const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
        this.known.set(id, agent !== undefined);
      } catch (error) {
        if (toAppError(error).code !== "AGENT_NOT_FOUND") throw error;
        this.known.set(id, false);
      }
    }
  }

  /** Whether the agent exists; only for agents `learn` has been given. */
  exists(agentId: string): boolean {
    return this.known.get(agentId) === true;
  }
}

/** Resolves once the response can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** Conversation history: reads, deletion, and a user's export and erasure (docs/api/history.md). */
export const historyRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/agents/:agentId/conversations",
    scope: "history:read",
    limit: "listPerMinute",
    handle: listConversations,
  },
  {
    method: "DELETE",
    path: "/v1/agents/:agentId/conversations/:conversationId",
    scope: "history:delete",
    limit: "deletePerMinute",
    handle: deleteConversation,
  },
  {
    method: "GET",
    path: "/v1/agents/:agentId/messages",
    scope: "history:read",
    limit: "listPerMinute",
    handle: listMessages,
  },
  {
    method: "GET",
    path: "/v1/agents/:agentId/messages/:messageId",
    scope: "history:read",
    limit: "getPerMinute",
    handle: getMessage,
  },
  {
    method: "GET",
    path: "/v1/users/:userId/export",
    scope: "history:read",
    limit: "listPerMinute",
    handle: exportUser,
  },
  {
    method: "DELETE",
    path: "/v1/users/:userId",
    scope: "history:delete",
    limit: "deletePerMinute",
    handle: eraseUser,
  },
];
