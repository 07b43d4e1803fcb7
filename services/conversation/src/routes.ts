import { mapAsyncIterable } from "@agentry/core";
import { AppError, toConnectError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import {
  ConversationService,
  type ListProvidersResponse,
  ListProvidersResponseSchema,
  type ListTurnsRequest,
  type ListTurnsResponse,
  ListTurnsResponseSchema,
  type PurgeAgentRequest,
  type PurgeAgentResponse,
  PurgeAgentResponseSchema,
  type Reply,
  ReplySchema,
  type SendMessageRequest,
  type SendMessageResponse,
  SendMessageResponseSchema,
  type StreamMessageRequest,
  type StreamMessageResponse,
  StreamMessageResponseSchema,
  type Turn,
  TurnRole,
  TurnSchema,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import type { ConversationContext } from "./context.js";
import {
  type MessageInput,
  type ReplyRecord,
  type StreamEvent,
  sendMessage,
  streamMessage,
} from "./service.js";
import type { TurnRecord } from "./store/types.js";

/** Page size of ListTurns when the caller asks for none, and the most it may ask for. */
export const DEFAULT_TURN_PAGE_SIZE = 50;
export const MAX_TURN_PAGE_SIZE = 100;

/** The ConversationService RPCs. Every handler's code is here or one call away, in service.ts or the store. */
export function conversationRoutes(ctx: ConversationContext): (router: ConnectRouter) => void {
  return (router) => {
    router.service(ConversationService, {
      async sendMessage(request: SendMessageRequest, call: HandlerContext): Promise<SendMessageResponse> {
        const reply = await sendMessage(ctx, messageInput(request, call), call.signal);
        return create(SendMessageResponseSchema, { reply: toReply(reply) });
      },

      streamMessage(
        request: StreamMessageRequest,
        call: HandlerContext,
      ): AsyncIterable<StreamMessageResponse> {
        return mapAsyncIterable(streamMessage(ctx, messageInput(request, call), call.signal), {
          map: toStreamResponse,
        });
      },

      async listTurns(request: ListTurnsRequest): Promise<ListTurnsResponse> {
        if (!request.accountId) throw invalid("account_id", "is required");
        if (!request.agentId) throw invalid("agent_id", "is required");
        const size = request.pageSize === 0 ? DEFAULT_TURN_PAGE_SIZE : request.pageSize;
        if (size < 1 || size > MAX_TURN_PAGE_SIZE) {
          throw invalid(
            "page_size",
            `must be 1 to ${MAX_TURN_PAGE_SIZE} (0 means ${DEFAULT_TURN_PAGE_SIZE})`,
          );
        }
        const page = await ctx.store.listTurns(
          {
            accountId: request.accountId,
            agentId: request.agentId,
            userId: request.userId ?? "",
            roomId: request.roomId ?? "",
          },
          { limit: size, cursor: request.pageToken || null },
        );
        return create(ListTurnsResponseSchema, {
          turns: page.turns.map(toTurn),
          nextPageToken: page.nextCursor ?? "",
        });
      },

      async listProviders(): Promise<ListProvidersResponse> {
        const catalog = ctx.providers.catalog();
        return create(ListProvidersResponseSchema, catalog);
      },

      async purgeAgent(request: PurgeAgentRequest): Promise<PurgeAgentResponse> {
        if (!request.accountId) throw invalid("account_id", "is required");
        if (!request.agentId) throw invalid("agent_id", "is required");
        const purged = await ctx.store.purgeAgent(request.accountId, request.agentId);
        ctx.logger.info({ agentId: request.agentId, ...purged }, "agent purged");
        return create(PurgeAgentResponseSchema, { deletedTurns: purged.turns, deletedCalls: purged.calls });
      },
    });
  };
}

function messageInput(
  request: SendMessageRequest | StreamMessageRequest,
  call: HandlerContext,
): MessageInput {
  return {
    accountId: request.accountId,
    agent: request.agent,
    text: request.text,
    userId: request.userId,
    roomId: request.roomId,
    context: request.context,
    requestId: request.requestId ?? call.requestHeader.get("x-request-id") ?? undefined,
  };
}

function toStreamResponse(event: StreamEvent): StreamMessageResponse {
  switch (event.type) {
    case "started":
      return create(StreamMessageResponseSchema, {
        event: {
          case: "started",
          value: {
            messageId: event.messageId,
            agentId: event.agentId,
            ...(event.userId === undefined ? {} : { userId: event.userId }),
            ...(event.roomId === undefined ? {} : { roomId: event.roomId }),
          },
        },
      });
    case "delta":
      return create(StreamMessageResponseSchema, { event: { case: "delta", value: { text: event.text } } });
    case "completed":
      return create(StreamMessageResponseSchema, {
        event: { case: "completed", value: toReply(event.reply) },
      });
  }
}

function toReply(reply: ReplyRecord): Reply {
  return create(ReplySchema, {
    id: reply.id,
    agentId: reply.agentId,
    ...(reply.userId === undefined ? {} : { userId: reply.userId }),
    ...(reply.roomId === undefined ? {} : { roomId: reply.roomId }),
    text: reply.text,
    model: reply.model,
    modelProvider: reply.modelProvider,
    finishReason: reply.finishReason,
    usage: reply.usage,
    latencyMs: reply.latencyMs,
    createTime: timestampFromDate(reply.createdAt),
  });
}

function toTurn(turn: TurnRecord): Turn {
  const assistant = turn.role === "assistant";
  return create(TurnSchema, {
    id: turn.id,
    agentId: turn.agentId,
    userId: turn.userId,
    roomId: turn.roomId,
    role: assistant ? TurnRole.ASSISTANT : TurnRole.USER,
    text: turn.text,
    model: turn.model ?? "",
    modelProvider: turn.provider ?? "",
    ...(assistant
      ? {
          usage: {
            inputTokens: turn.inputTokens,
            outputTokens: turn.outputTokens,
            totalTokens: turn.inputTokens + turn.outputTokens,
          },
        }
      : {}),
    latencyMs: turn.latencyMs,
    createTime: timestampFromDate(new Date(turn.createdAt)),
  });
}

function invalid(field: string, issue: string): AppError {
  return new AppError("INVALID_REQUEST", `${field} ${issue}.`, { details: [{ field, issue }] });
}
