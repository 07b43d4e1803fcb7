import {
  exceedsCharacters,
  MEMORY_BOUNDS,
  MESSAGE_BOUNDS,
  mapAsyncIterable,
  PAGE_LIMIT,
} from "@agentry/core";
import { AppError, invalid } from "@agentry/errors";
import {
  type ApproveToolCallsRequest,
  type ApproveToolCallsResponse,
  ApproveToolCallsResponseSchema,
  auditEventMessage,
  type BackgroundMessageSchema,
  type CancelAgentRunsRequest,
  type CancelAgentRunsResponse,
  CancelAgentRunsResponseSchema,
  type Conversation,
  ConversationSchema,
  ConversationService,
  type CreateDocumentRequest,
  type CreateDocumentResponse,
  CreateDocumentResponseSchema,
  type CreateMemoryRequest,
  type CreateMemoryResponse,
  CreateMemoryResponseSchema,
  type DeleteConversationRequest,
  type DeleteConversationResponse,
  DeleteConversationResponseSchema,
  type DeleteDocumentRequest,
  type DeleteDocumentResponse,
  DeleteDocumentResponseSchema,
  type DeleteMemoryRequest,
  type DeleteMemoryResponse,
  DeleteMemoryResponseSchema,
  type EraseUserRequest,
  type EraseUserResponse,
  EraseUserResponseSchema,
  type ExportUserRequest,
  type ExportUserResponse,
  ExportUserResponseSchema,
  type GetDocumentRequest,
  type GetDocumentResponse,
  GetDocumentResponseSchema,
  type GetMessageRequest,
  type GetMessageResponse,
  GetMessageResponseSchema,
  type GetUsageRequest,
  type GetUsageResponse,
  GetUsageResponseSchema,
  HistoryOrder,
  type ListConversationsRequest,
  type ListConversationsResponse,
  ListConversationsResponseSchema,
  type ListDocumentsRequest,
  type ListDocumentsResponse,
  ListDocumentsResponseSchema,
  type ListMemoriesRequest,
  type ListMemoriesResponse,
  ListMemoriesResponseSchema,
  type ListMessagesRequest,
  type ListMessagesResponse,
  ListMessagesResponseSchema,
  type ListProvidersResponse,
  ListProvidersResponseSchema,
  type ListRunsRequest,
  type ListRunsResponse,
  ListRunsResponseSchema,
  type ListTurnsRequest,
  type ListTurnsResponse,
  ListTurnsResponseSchema,
  type Memory,
  MemorySchema,
  MessageStatus,
  type PageCursor,
  type PurgeAgentRequest,
  type PurgeAgentResponse,
  PurgeAgentResponseSchema,
  plainAuditQuery,
  type Reply,
  ReplySchema,
  RunSchema,
  type SendMessageRequest,
  type SendMessageResponse,
  SendMessageResponseSchema,
  type StartMessageRequest,
  type StartMessageResponse,
  StartMessageResponseSchema,
  type StreamMessageRequest,
  type StreamMessageResponse,
  StreamMessageResponseSchema,
  type SuppliedContext as SuppliedContextMessage,
  SuppliedRole,
  type ToolCall,
  ToolCallSchema,
  type Turn,
  TurnRole,
  TurnSchema,
  TurnView,
  UsageDimension,
  type UsageFiguresSchema,
  UsageGranularity,
  type UsageGroupSchema,
  type WatchMessageRequest,
  type WatchMessageResponse,
  WatchMessageResponseSchema,
} from "@agentry/proto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { specJsonOf } from "./agent-spec.js";
import type { ConversationContext } from "./context.js";
import { createDocument, toDocument } from "./document-rpc.js";
import { memoryLimit, newMemory } from "./memories.js";
import type { SuppliedContext } from "./prompt.js";
import { type BackgroundState, type LoggedEvent, storedBackground } from "./run-records.js";
import { scheduleHandlers } from "./schedule-routes.js";
import type { MessageInput, ReplyRecord, StreamEvent } from "./service.js";
import type {
  ConversationRecord,
  ConversationStore,
  ListedRunStatus,
  MemoryRecord,
  PageRequest,
  RunRecord,
  TurnRecord,
} from "./store/types.js";
import type { PendingToolCall } from "./tool-loop.js";
import { awaitsApprovals, type ToolCallRecord } from "./tools.js";
import type {
  UsageDimension as Dimension,
  UsageFigures as Figures,
  UsageGranularity as Granularity,
  UsageGroup as Group,
} from "./usage.js";

/** Page size of ListTurns when the caller asks for none, and the most it may ask for. */
export const DEFAULT_TURN_PAGE_SIZE = 50;
export const MAX_TURN_PAGE_SIZE = PAGE_LIMIT.max;

/** Items per page of the history lists when the caller asks for none (docs/api/lists-and-pagination.md, "Cursor pagination"). */
export const DEFAULT_HISTORY_PAGE_SIZE = PAGE_LIMIT.default;

/** Messages per response of an export: each is one read of the store, so memory stays flat whatever the size. */
const EXPORT_PAGE_SIZE = 500;

/** The ConversationService RPCs. Every handler's code is here or one call away, in service.ts or the store. */
export function conversationRoutes(ctx: ConversationContext): (router: ConnectRouter) => void {
  return (router) => {
    router.service(ConversationService, {
      ...scheduleHandlers(ctx),
      async sendMessage(request: SendMessageRequest, call: HandlerContext): Promise<SendMessageResponse> {
        const input = messageInput(request, call);
        // A turn that may pause for approval is generated as a run, which keeps what the pause needs; the
        // answer is then the paused message's state rather than a request held open for a person.
        if (awaitsApprovals(specJsonOf(input.agent).plugins)) {
          let id: string | undefined;
          let paused = false;
          for await (const { event } of ctx.sends.stream(input, call.signal, false)) {
            if (event.type === "completed")
              return create(SendMessageResponseSchema, { reply: toReply(event.reply) });
            if (event.type === "started") id = event.messageId;
            // Its last event: the stream is left first, so that the run, no longer paced by it, writes its pause.
            if (event.type === "approval_required") paused = true;
          }
          const agentId = request.agent?.id ?? "";
          const state = paused && id ? await ctx.runs.background(input.accountId, agentId, id) : null;
          if (state) return create(SendMessageResponseSchema, { paused: toBackgroundMessage(state) });
          throw new AppError("AGENT_UNAVAILABLE", "The message ended without a reply; send it again.");
        }
        const reply = await ctx.sends.send(input, (generating) => ctx.runs.send(generating, call.signal));
        return create(SendMessageResponseSchema, { reply: toReply(reply) });
      },

      async approveToolCalls(request: ApproveToolCallsRequest): Promise<ApproveToolCallsResponse> {
        const scope = agentScope(request);
        if (!request.messageId) throw invalid("message_id", "is required");
        const state = await ctx.runs.approve(scope, request.messageId, {
          toolCallIds: request.toolCallIds,
          approve: request.approve,
          reason: request.reason,
        });
        return create(ApproveToolCallsResponseSchema, { message: toBackgroundMessage(state) });
      },

      streamMessage(
        request: StreamMessageRequest,
        call: HandlerContext,
      ): AsyncIterable<StreamMessageResponse> {
        const events = ctx.sends.stream(
          messageInput(request, call),
          call.signal,
          request.continueOnDisconnect,
        );
        return mapAsyncIterable(events, {
          map: toStreamResponse,
        });
      },

      async startMessage(request: StartMessageRequest, call: HandlerContext): Promise<StartMessageResponse> {
        // The run outlives this call: its deadline is the turn's own, not the call's.
        const messageId = await ctx.sends.start({
          ...messageInput(request, call),
          deadline: undefined,
        });
        return create(StartMessageResponseSchema, { messageId });
      },

      async *watchMessage(
        request: WatchMessageRequest,
        call: HandlerContext,
      ): AsyncIterable<WatchMessageResponse> {
        const scope = agentScope(request);
        if (!request.messageId) throw invalid("message_id", "is required");
        if (request.after < 0n) throw invalid("after", "must be 0 or more");
        const events = await ctx.runs.follow(
          scope,
          request.messageId,
          Number(request.after),
          request.endOnly,
          call.signal,
        );
        // The log exists: said before any event may be due, so that the caller can answer at once.
        yield create(WatchMessageResponseSchema, {});
        for await (const logged of events) yield toWatchResponse(logged);
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

      async listConversations(request: ListConversationsRequest): Promise<ListConversationsResponse> {
        const { accountId, agentId } = agentScope(request);
        const page = await ctx.store.listConversations(
          accountId,
          agentId,
          {
            ...(request.userId !== undefined ? { userId: request.userId } : {}),
            ...(request.roomId !== undefined ? { roomId: request.roomId } : {}),
          },
          pageRequest(request.page),
        );
        return create(ListConversationsResponseSchema, {
          conversations: page.items.map(toConversation),
          hasMore: page.hasMore,
        });
      },

      async listMessages(request: ListMessagesRequest): Promise<ListMessagesResponse> {
        const { accountId, agentId } = agentScope(request);
        const filter = {
          ...(request.conversationId !== undefined ? { conversationId: request.conversationId } : {}),
          ...(request.userId !== undefined ? { userId: request.userId } : {}),
          ...(request.roomId !== undefined ? { roomId: request.roomId } : {}),
        };
        // The texts kept with the turns, which the gateway writes as they are (TurnView).
        if (request.view === TurnView.JSON) {
          const page = await ctx.store.listMessageTexts(
            accountId,
            agentId,
            filter,
            pageRequest(request.page),
          );
          return create(ListMessagesResponseSchema, { messageJson: page.items, hasMore: page.hasMore });
        }
        const page = await ctx.store.listMessages(accountId, agentId, filter, pageRequest(request.page));
        return create(ListMessagesResponseSchema, {
          messages: page.items.map(toTurn),
          hasMore: page.hasMore,
        });
      },

      async cancelAgentRuns(request: CancelAgentRunsRequest): Promise<CancelAgentRunsResponse> {
        const { accountId, agentId } = agentScope(request);
        const cancelled = await ctx.runs.cancelAgent(accountId, agentId);
        return create(CancelAgentRunsResponseSchema, { cancelled });
      },

      async listRuns(request: ListRunsRequest): Promise<ListRunsResponse> {
        const { accountId, agentId } = agentScope(request);
        const status = request.status ?? null;
        if (status !== null && !LISTED_RUN_STATUSES.includes(status as ListedRunStatus)) {
          throw invalid("status", `must be one of ${LISTED_RUN_STATUSES.join(", ")}`);
        }
        const page = await ctx.store.listRuns(
          accountId,
          agentId,
          status as ListedRunStatus | null,
          pageRequest(request.page),
        );
        return create(ListRunsResponseSchema, { runs: page.items.map(toRunMessage), hasMore: page.hasMore });
      },

      async getMessage(request: GetMessageRequest): Promise<GetMessageResponse> {
        const { accountId, agentId } = agentScope(request);
        const background = await ctx.runs.background(accountId, agentId, request.messageId);
        if (background) {
          return create(GetMessageResponseSchema, { background: toBackgroundMessage(background) });
        }
        const message = await ctx.store.getMessage(accountId, agentId, request.messageId);
        if (!message) {
          throw new AppError(
            "MESSAGE_NOT_FOUND",
            `Message ${JSON.stringify(request.messageId)} does not exist.`,
          );
        }
        const stored = storedBackground(message);
        if (stored) return create(GetMessageResponseSchema, { background: toBackgroundMessage(stored) });
        return create(GetMessageResponseSchema, { message: toTurn(message) });
      },

      async deleteConversation(request: DeleteConversationRequest): Promise<DeleteConversationResponse> {
        const { accountId, agentId } = agentScope(request);
        const deleted = await ctx.store.deleteConversation(accountId, agentId, request.conversationId);
        if (deleted === null) {
          throw new AppError(
            "CONVERSATION_NOT_FOUND",
            `Conversation ${JSON.stringify(request.conversationId)} does not exist.`,
          );
        }
        ctx.logger.info({ agentId, conversationId: request.conversationId, deleted }, "conversation deleted");
        return create(DeleteConversationResponseSchema, { deletedMessages: deleted });
      },

      exportUser(request: ExportUserRequest): AsyncIterable<ExportUserResponse> {
        const { accountId, userId } = userScope(request);
        return exportPages(ctx, accountId, userId);
      },

      async eraseUser(request: EraseUserRequest): Promise<EraseUserResponse> {
        const { accountId, userId } = userScope(request);
        const deleted = await ctx.store.eraseUser(accountId, userId);
        ctx.logger.info({ deleted }, "user erased");
        return create(EraseUserResponseSchema, { deletedMessages: deleted });
      },
      async listConversationAuditEvents(request) {
        const { accountId, ...query } = plainAuditQuery(request.query);
        const page = await ctx.store.listAuditEvents(accountId, query);
        return { events: page.items.map(auditEventMessage), hasMore: page.hasMore };
      },
      async listMemories(request: ListMemoriesRequest): Promise<ListMemoriesResponse> {
        const { accountId, agentId } = agentScope(request);
        const page = await ctx.store.listMemories(
          accountId,
          agentId,
          {
            ...(request.userId !== undefined ? { userId: request.userId } : {}),
            ...(request.query !== undefined ? { query: request.query } : {}),
          },
          pageRequest(request.page),
        );
        return create(ListMemoriesResponseSchema, {
          memories: page.items.map(toMemory),
          hasMore: page.hasMore,
        });
      },

      async createMemory(request: CreateMemoryRequest): Promise<CreateMemoryResponse> {
        const { accountId, agentId } = agentScope(request);
        const { userId, text } = request;
        if (userId === "" || exceedsCharacters(userId, MESSAGE_BOUNDS.idMaxLength)) {
          throw invalid("userId", `must be 1 to ${MESSAGE_BOUNDS.idMaxLength} characters`);
        }
        const memory = newMemory(text, null);
        if (!memory) {
          throw invalid("text", `must be 1 to ${MEMORY_BOUNDS.textMaxLength} characters once trimmed`);
        }
        const limit = request.limit || memoryLimit(undefined);
        const [stored] = await ctx.store.addMemories({ accountId, agentId, userId }, [memory], limit);
        // Nothing stored: the agent was deleted meanwhile.
        if (!stored) throw new AppError("AGENT_NOT_FOUND", `Agent ${agentId} does not exist.`);
        if (stored.created) ctx.memoryVectors?.index({ accountId, agentId, userId }, [stored.memory]);
        return create(CreateMemoryResponseSchema, {
          memory: toMemory(stored.memory),
          created: stored.created,
        });
      },

      async deleteMemory(request: DeleteMemoryRequest): Promise<DeleteMemoryResponse> {
        const { accountId, agentId } = agentScope(request);
        if (!(await ctx.store.deleteMemory(accountId, agentId, request.memoryId))) {
          throw new AppError(
            "MEMORY_NOT_FOUND",
            `Memory ${JSON.stringify(request.memoryId)} does not exist.`,
          );
        }
        return create(DeleteMemoryResponseSchema, {});
      },

      async createDocument(request: CreateDocumentRequest): Promise<CreateDocumentResponse> {
        const { accountId, agentId } = agentScope(request);
        const document = await createDocument(ctx, accountId, agentId, request);
        return create(CreateDocumentResponseSchema, { document: toDocument(document) });
      },

      async listDocuments(request: ListDocumentsRequest): Promise<ListDocumentsResponse> {
        const { accountId, agentId } = agentScope(request);
        const page = await ctx.store.listDocuments(accountId, agentId, pageRequest(request.page));
        return create(ListDocumentsResponseSchema, {
          documents: page.items.map(toDocument),
          hasMore: page.hasMore,
          sources: await ctx.store.documentSources(accountId, agentId),
        });
      },

      async getDocument(request: GetDocumentRequest): Promise<GetDocumentResponse> {
        const { accountId, agentId } = agentScope(request);
        const document = await ctx.store.getDocument(accountId, agentId, request.documentId);
        if (!document) throw documentNotFound(request.documentId);
        return create(GetDocumentResponseSchema, { document: toDocument(document) });
      },

      async deleteDocument(request: DeleteDocumentRequest): Promise<DeleteDocumentResponse> {
        const { accountId, agentId } = agentScope(request);
        if (!(await ctx.store.deleteDocument(accountId, agentId, request.documentId))) {
          throw documentNotFound(request.documentId);
        }
        return create(DeleteDocumentResponseSchema, {});
      },

      async getUsage(request: GetUsageRequest): Promise<GetUsageResponse> {
        return usageReport(ctx.store, request);
      },
    });
  };
}

/** GetUsage over a store: what the RPC answers, and what budgets' counters start from here. */
export async function usageReport(
  store: ConversationStore,
  request: GetUsageRequest,
): Promise<GetUsageResponse> {
  if (!request.accountId) throw invalid("account_id", "is required");
  const report = await store.getUsage({
    accountId: request.accountId,
    from: request.fromTime && timestampDate(request.fromTime),
    to: request.toTime && timestampDate(request.toTime),
    granularity: granularityOf(request.granularity),
    agentId: request.agentId,
    userId: request.userId,
    // An unknown dimension goes on by its number, for the store to refuse by name.
    groupBy: request.groupBy.map((dimension) => DIMENSIONS.get(dimension) ?? String(dimension)),
    countsOnly: request.countsOnly,
  });
  return create(GetUsageResponseSchema, {
    fromTime: timestampFromDate(new Date(report.from)),
    toTime: timestampFromDate(new Date(report.to)),
    granularity: report.granularity === "hour" ? UsageGranularity.HOUR : UsageGranularity.DAY,
    buckets: report.buckets.map((bucket) => ({
      startTime: timestampFromDate(new Date(bucket.start)),
      endTime: timestampFromDate(new Date(bucket.end)),
      groups: bucket.groups.map(toUsageGroup),
    })),
    totals: report.totals.map(toUsageGroup),
  });
}

function messageInput(
  request: SendMessageRequest | StreamMessageRequest | StartMessageRequest,
  call: HandlerContext,
): MessageInput {
  return {
    accountId: request.accountId,
    // As sent: its JSON fields are read where needed, from their text where set (agent-spec.ts).
    agent: request.agent,
    text: request.text,
    userId: request.userId,
    roomId: request.roomId,
    context: request.context,
    requestId: request.requestId ?? call.requestHeader.get("x-request-id") ?? undefined,
    apiKeyId: request.apiKeyId,
    deadline: deadlineOf(call),
    idempotencyKeyHash: request.idempotencyKeyHash || undefined,
    suppliedContext: "suppliedContext" in request ? suppliedContext(request.suppliedContext) : undefined,
    onConflict: request.onConflict,
    enforceBudgets: "enforceBudgets" in request ? request.enforceBudgets : undefined,
  };
}

/** The caller's RPC deadline as epoch milliseconds, when it set one. */
function deadlineOf(call: HandlerContext): number | undefined {
  const remaining = call.timeoutMs();
  return remaining === undefined ? undefined : Date.now() + remaining;
}

function toStreamResponse({ seq, event }: LoggedEvent): StreamMessageResponse {
  const response = toStreamEvent(event as StreamEvent);
  response.sequence = BigInt(seq);
  return response;
}

function toWatchResponse({ seq, event }: LoggedEvent): WatchMessageResponse {
  const sequence = BigInt(seq);
  if (event.type === "failed") {
    return create(WatchMessageResponseSchema, {
      sequence,
      event: { case: "failed", value: { code: event.code, message: event.message } },
    });
  }
  // The same events as a stream's, in the same cases.
  const { event: streamed } = toStreamEvent(event);
  return create(WatchMessageResponseSchema, { sequence, event: streamed } as MessageInitShape<
    typeof WatchMessageResponseSchema
  >);
}

function toBackgroundMessage(state: BackgroundState): MessageInitShape<typeof BackgroundMessageSchema> {
  return {
    id: state.id,
    agentId: state.agentId,
    ...(state.userId === undefined ? {} : { userId: state.userId }),
    ...(state.roomId === undefined ? {} : { roomId: state.roomId }),
    status: BACKGROUND_STATUS[state.status],
    ...(state.reply ? { reply: toReply(state.reply) } : {}),
    ...(state.error ? { error: state.error } : {}),
    ...(state.approval
      ? {
          pendingToolCalls: state.approval.pendingToolCalls.map(toPendingToolCall),
          approvalExpireTime: timestampFromDate(state.approval.expiresAt),
        }
      : {}),
  };
}

function toPendingToolCall(call: PendingToolCall) {
  return { id: call.id, tool: call.tool, argumentsJson: call.arguments };
}

const BACKGROUND_STATUS = {
  pending: MessageStatus.PENDING,
  requires_action: MessageStatus.REQUIRES_ACTION,
  completed: MessageStatus.COMPLETED,
  failed: MessageStatus.FAILED,
  cancelled: MessageStatus.CANCELLED,
} as const;

function toStreamEvent(event: StreamEvent): StreamMessageResponse {
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
    case "tool.call":
      return create(StreamMessageResponseSchema, {
        event: {
          case: "toolCall",
          value: create(ToolCallSchema, { id: event.id, name: event.name, argumentsJson: event.arguments }),
        },
      });
    case "tool.result":
      return create(StreamMessageResponseSchema, {
        event: { case: "toolResult", value: toToolCall(event.call) },
      });
    case "approval_required":
      return create(StreamMessageResponseSchema, {
        event: {
          case: "approvalRequired",
          value: {
            messageId: event.messageId,
            pendingToolCalls: event.pendingToolCalls.map(toPendingToolCall),
          },
        },
      });
  }
}

function toToolCall(call: ToolCallRecord): ToolCall {
  return create(ToolCallSchema, {
    id: call.id,
    name: call.name,
    argumentsJson: call.arguments,
    ok: call.ok,
    outputJson: call.output ?? "",
    error: call.error ?? "",
  });
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
    fallback: reply.fallback,
    toolCalls: reply.toolCalls.map(toToolCall),
    citations: reply.citations,
  });
}

function documentNotFound(id: string): AppError {
  return new AppError("DOCUMENT_NOT_FOUND", `Document ${JSON.stringify(id)} does not exist.`);
}

/** The account and agent every history read is scoped to, both required. */
function agentScope(request: { accountId: string; agentId: string }): { accountId: string; agentId: string } {
  if (!request.accountId) throw invalid("account_id", "is required");
  if (!request.agentId) throw invalid("agent_id", "is required");
  return request;
}

/** The account and user of an export or an erasure, both required. */
function userScope(request: { accountId: string; userId: string }): { accountId: string; userId: string } {
  if (!request.accountId) throw invalid("account_id", "is required");
  if (!request.userId) throw invalid("user_id", "is required");
  return request;
}

/** A page of a history list as the stores take it; INVALID_REQUEST for a limit out of bounds or two cursors. */
/** The statuses ListRuns filters by. */
const LISTED_RUN_STATUSES: readonly ListedRunStatus[] = [
  "pending",
  "requires_action",
  "completed",
  "failed",
  "cancelled",
];

/** A run's status as ListRuns shows it (ListedRunStatus). */
function listedStatus(run: RunRecord): ListedRunStatus {
  if (run.cancelled) return "cancelled";
  if (run.status === "pending" && run.approval) return "requires_action";
  return run.status;
}

/** A run as ListRuns answers it: a run the kill switch ended is `cancelled`, a paused one `requires_action`. */
function toRunMessage(run: RunRecord) {
  return create(RunSchema, {
    messageId: run.id,
    status: listedStatus(run),
    background: run.background,
    ...(run.userId !== null ? { userId: run.userId } : {}),
    ...(run.roomId !== null ? { roomId: run.roomId } : {}),
    createTime: timestampFromDate(new Date(run.createdAt)),
    ...(run.endedAt !== null ? { endTime: timestampFromDate(new Date(run.endedAt)) } : {}),
    ...(run.errorCode !== null ? { errorCode: run.errorCode } : {}),
    ...(run.errorMessage !== null ? { errorMessage: run.errorMessage } : {}),
    takeovers: run.takeovers ?? 0,
  });
}

function pageRequest(cursor: PageCursor | undefined): PageRequest {
  const limit = cursor?.limit || DEFAULT_HISTORY_PAGE_SIZE;
  if (limit < 1 || limit > MAX_TURN_PAGE_SIZE) {
    throw invalid("limit", `must be 1 to ${MAX_TURN_PAGE_SIZE} (0 means ${DEFAULT_HISTORY_PAGE_SIZE})`);
  }
  const before = cursor?.before || null;
  const after = cursor?.after || null;
  if (before !== null && after !== null) throw invalid("before", "cannot be combined with after");
  return { limit, before, after, order: cursor?.order === HistoryOrder.ASC ? "asc" : "desc" };
}

/** A user's messages, then memories, as pages of the store, read one after the other as the caller takes them. */
async function* exportPages(
  ctx: ConversationContext,
  accountId: string,
  userId: string,
): AsyncIterable<ExportUserResponse> {
  let cursor: string | null = null;
  do {
    const page = await ctx.store.exportUser(accountId, userId, cursor, EXPORT_PAGE_SIZE);
    if (page.turns.length > 0) yield create(ExportUserResponseSchema, { messages: page.turns.map(toTurn) });
    cursor = page.next;
  } while (cursor !== null);
  do {
    const page = await ctx.store.exportUserMemories(accountId, userId, cursor, EXPORT_PAGE_SIZE);
    if (page.memories.length > 0) {
      yield create(ExportUserResponseSchema, { memories: page.memories.map(toMemory) });
    }
    cursor = page.next;
  } while (cursor !== null);
}

function toMemory(memory: MemoryRecord): Memory {
  return create(MemorySchema, {
    id: memory.id,
    agentId: memory.agentId,
    userId: memory.userId,
    text: memory.text,
    sourceMessageId: memory.sourceMessageId ?? "",
    createTime: timestampFromDate(new Date(memory.createdAt)),
  });
}

function toConversation(conversation: ConversationRecord): Conversation {
  return create(ConversationSchema, {
    id: conversation.id,
    agentId: conversation.agentId,
    userId: conversation.userId,
    roomId: conversation.roomId,
    messageCount: conversation.messageCount,
    createTime: timestampFromDate(new Date(conversation.createdAt)),
    lastMessageTime: timestampFromDate(new Date(conversation.lastMessageAt)),
  });
}

function toTurn(turn: TurnRecord): Turn {
  const assistant = turn.role === "assistant";
  return create(TurnSchema, {
    id: turn.id,
    conversationId: turn.conversationId,
    finishReason: turn.finishReason ?? "",
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
    toolCalls: turn.toolCalls.map(toToolCall),
    citations: turn.citations,
  });
}

const DIMENSIONS = new Map<UsageDimension, Dimension>([
  [UsageDimension.AGENT_ID, "agentId"],
  [UsageDimension.USER_ID, "userId"],
  [UsageDimension.MODEL, "model"],
  [UsageDimension.API_KEY_ID, "apiKeyId"],
]);

function granularityOf(value: UsageGranularity): Granularity | undefined {
  switch (value) {
    case UsageGranularity.UNSPECIFIED:
      return undefined;
    case UsageGranularity.HOUR:
      return "hour";
    case UsageGranularity.DAY:
      return "day";
    default:
      throw invalid("granularity", "must be HOUR or DAY");
  }
}

function toUsageGroup(group: Group): MessageInitShape<typeof UsageGroupSchema> {
  const { figures, ...keys } = group;
  return { ...keys, figures: toUsageFigures(figures) };
}

function toUsageFigures(figures: Figures): MessageInitShape<typeof UsageFiguresSchema> {
  const percentiles = ({ p50, p95 }: { p50: number | null; p95: number | null }) => ({
    ...(p50 === null ? {} : { p50 }),
    ...(p95 === null ? {} : { p95 }),
  });
  return {
    messages: BigInt(figures.messages),
    errors: BigInt(figures.errors),
    inputTokens: BigInt(figures.inputTokens),
    outputTokens: BigInt(figures.outputTokens),
    latencyMs: percentiles(figures.latencyMs),
    timeToFirstTokenMs: percentiles(figures.timeToFirstTokenMs),
  };
}

/** The conversation a caller supplies, as the prompt takes it; a message of no known speaker is refused. */
function suppliedContext(supplied: SuppliedContextMessage | undefined): SuppliedContext | undefined {
  if (!supplied) return undefined;
  const messages = supplied.messages.map((message, index) => {
    if (message.role === SuppliedRole.USER) return { role: "user" as const, text: message.text };
    if (message.role === SuppliedRole.ASSISTANT) return { role: "assistant" as const, text: message.text };
    throw invalid(`suppliedContext.messages[${index}].role`, "must be user or assistant");
  });
  return { system: supplied.system, messages };
}
