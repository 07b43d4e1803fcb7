import type { ServerResponse } from "node:http";
import { isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { presentStoredMessage, type StoredMessageJson } from "@agentry/events";
import {
  type Conversation,
  type ExportUserResponse,
  HistoryOrder,
  type PageCursor,
  type Turn,
  TurnRole,
  TurnView,
} from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { toAppError } from "../http/errors.js";
import { CURSOR_NOTE } from "../openapi/operations.js";
import { listConversationsQuery, listMessagesQuery, userPath } from "../validation/history.js";
import { parseOrThrow } from "../validation/issues.js";
import { component, defineRoute, type HandlerInput, type Route } from "./define.js";
import { UserExportLine } from "./history.schemas.js";
import { presentMemory } from "./memories.js";
import { callerGone, presentBackgroundMessage, toolCallView } from "./messages.js";

/** A stored message as every history route presents it (docs/api/history.md, "Stored messages"). */
export function presentMessage(turn: Turn): StoredMessageJson {
  return presentStoredMessage({
    id: turn.id,
    agentId: turn.agentId,
    conversationId: turn.conversationId,
    // The default conversation's user and room are stored as "", and shown as the send reply shows them.
    userId: turn.userId || null,
    roomId: turn.roomId || null,
    role: turn.role === TurnRole.ASSISTANT ? "assistant" : "user",
    text: turn.text,
    createdAt: isoTime(turn.createTime),
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
    toolCalls: turn.toolCalls.map(toolCallView),
    citations: turn.citations,
  });
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
export async function callersAgent({ ctx, gateway, principal, rpc }: HandlerInput): Promise<string> {
  const id = ctx.params.agentId ?? "";
  if (!isId("agent", id))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
  const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
  return id;
}

export function pageCursor(query: {
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

/** The user id of the user routes, decoded from the path; a value no message can carry is refused. */
function userIdOf(input: HandlerInput): string {
  return parseOrThrow(userPath, { userId: input.ctx.params.userId }, "path").userId;
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
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/conversations",
    scope: "history:read",
    limit: "listPerMinute",
    operationId: "listConversations",
    tag: "History",
    summary: "List an agent's conversations",
    description: `The agent's conversations, newest activity first, optionally only those of one \`userId\` or one \`roomId\` (both: the one conversation). ${CURSOR_NOTE}`,
    query: listConversationsQuery,
    pagination: "cursor",
    success: { status: 200, schema: "ConversationListResponse", description: "One page of conversations." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = await callersAgent(input);
      const query = input.query();
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
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/agents/:agentId/conversations/:conversationId",
    scope: "history:delete",
    limit: "deletePerMinute",
    operationId: "deleteConversation",
    tag: "History",
    summary: "Delete a conversation",
    description:
      "Deletes the conversation and all its messages, in one transaction: they are gone from every read and from every later prompt (the next message with the same `userId` and `roomId` starts a new conversation, with a new id). Deleting it again is answered `404 CONVERSATION_NOT_FOUND`.",
    success: {
      status: 200,
      schema: "ConversationDeletedResponse",
      description: "The conversation was deleted, with this many messages.",
    },
    errors: ["AGENT_NOT_FOUND", "CONVERSATION_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = await callersAgent(input);
      const conversationId = input.params.conversationId;
      if (!isId("conversation", conversationId)) throw conversationNotFound(conversationId);
      const { deletedMessages } = await gateway.conversations.deleteConversation(
        { accountId: principal.accountId, agentId, conversationId },
        rpc,
      );
      ctx.body = {
        success: true,
        data: { id: conversationId, deleted: true, messagesDeleted: deletedMessages },
      };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/messages",
    scope: "history:read",
    limit: "listPerMinute",
    operationId: "listMessages",
    tag: "History",
    summary: "List an agent's messages",
    description: `The agent's stored messages, both sides (a message before its reply), newest first unless \`order=asc\`. Filters: \`conversationId\` (one conversation), or \`userId\` (that user's messages in every room), \`roomId\` (every user's in that room), both (one conversation); none: every message of the agent. \`conversationId\` with \`userId\` or \`roomId\` is refused with \`400 INVALID_REQUEST\`. ${CURSOR_NOTE}`,
    query: listMessagesQuery,
    pagination: "cursor",
    success: { status: 200, schema: "HistoryMessageListResponse", description: "One page of messages." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND", "CONVERSATION_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = await callersAgent(input);
      const query = input.query();
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
          view: TurnView.JSON,
        },
        rpc,
      );
      const pagination = { limit: query.limit, hasMore: response.hasMore };
      // A conversation service of an earlier release ignores the view and answers Turn messages.
      if (response.messages.length > 0) {
        ctx.body = { success: true, data: response.messages.map(presentMessage), pagination };
        return;
      }
      // The page is assembled from the messages' texts, as `JSON.stringify` would write the same envelope.
      ctx.body = `{"success":true,"data":[${response.messageJson.join(",")}],"pagination":${JSON.stringify(pagination)}}`;
      ctx.type = "application/json";
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/messages/:messageId",
    scope: "history:read",
    limit: "getPerMinute",
    operationId: "getMessage",
    tag: "History",
    summary: "Get a message",
    description:
      "One stored message of the agent: a message sent to it, or its reply (whose id the send call answered with). For a message sent with `background: true` (or paused for tool approval), a `BackgroundMessage`: the reply object with `status` (`pending`, `requires_action`, `completed` or `failed`). A completed one is answered so for as long as its reply is stored; a failed one for 24 hours after it ended (or `STREAM_RETENTION`, if longer), then `404 MESSAGE_NOT_FOUND`.",
    success: {
      status: 200,
      schema: "MessageByIdResponse",
      description:
        "The message (`HistoryMessage`); for a background message while its events are kept, a `BackgroundMessage`.",
      sdkVariants: {
        BackgroundMessage: {
          method: "getBackground",
          wait: { method: "waitForBackground", pending: { status: "pending" } },
        },
      },
    },
    errors: ["AGENT_NOT_FOUND", "MESSAGE_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agentId = await callersAgent(input);
      const messageId = input.params.messageId;
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
    },
  }),
  /**
   * Streams a user's messages as NDJSON, one page of the ExportUser stream at a time: the next page is read only
   * once the last one has been handed to the socket, so the gateway holds one page whatever the export's size.
   * Nothing is written before the first page has arrived, so a failure to start is an ordinary JSON error; a
   * failure later can only cut the response short (no final chunk), which clients see as an incomplete body.
   */
  defineRoute({
    method: "GET",
    path: "/v1/users/:userId/export",
    scope: "history:read",
    limit: "listPerMinute",
    sdk: { resource: ["users"], method: "export" },
    operationId: "exportUser",
    tag: "History",
    summary: "Export a user's messages",
    description:
      "Every message the user exchanged with any agent of the account, oldest first, as NDJSON (`application/x-ndjson`): one `HistoryMessage` per line, each with its `agentId`, each line ending in `\\n`. The response is streamed as it is read, a page at a time, so its size is not limited; a user with no messages is answered `200` with an empty body. Messages of an agent that no longer exists are left out. After the messages come the user's memories (docs/api/memories.md), one `Memory` per line, told apart by their `mem_` ids (each line is a `UserExportLine`). A failure after the first line cuts the response short (it ends without its last chunk), which HTTP clients report as an incomplete body: retry the export.",
    success: {
      status: 200,
      schema: component("UserExportLine", UserExportLine),
      description:
        "The user's messages, then their memories, one JSON object per line; an empty body when there are none.",
    },
    errors: ["INVALID_REQUEST"],
    ndjson: true,
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const userId = userIdOf(input);
      const abort = callerGone(input);
      // No deadline for the whole call, which lasts as long as the caller takes to read it; each page has one.
      const pages = gateway.conversations
        .exportUser(
          { accountId: principal.accountId, userId },
          { headers: rpc.headers, signal: abort.signal },
        )
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
          else
            gateway.logger.error({ err: toAppError(error).cause ?? error }, "export failed after it started");
          ctx.res.destroy();
        }
      } finally {
        await pages.return?.();
      }
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/users/:userId",
    scope: "history:delete",
    limit: "deletePerMinute",
    operationId: "eraseUser",
    tag: "History",
    summary: "Erase a user",
    description:
      "Erases the user's conversations and messages in every agent of the account, in one transaction, and removes the user id from the usage records, whose counts stay, unattributed; then the user's `message.completed` webhook events and their delivery log. Nothing of them can be read afterwards, nor reaches a later prompt. Idempotent: erasing again, or a user with no messages, answers the same with `messagesDeleted: 0`.",
    success: { status: 200, schema: "UserErasedResponse", description: "The user was erased." },
    errors: ["INVALID_REQUEST"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const userId = userIdOf(input);
      const { deletedMessages } = await gateway.conversations.eraseUser(
        { accountId: principal.accountId, userId },
        rpc,
      );
      // Then the user's replies the webhooks service was handed, and their delivery log.
      await gateway.webhooks.eraseUserEvents({ accountId: principal.accountId, userId }, rpc);
      ctx.body = { success: true, data: { userId, deleted: true, messagesDeleted: deletedMessages } };
    },
  }),
];
