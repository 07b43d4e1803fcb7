import { exceedsCharacters, MESSAGE_BOUNDS, newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  type CreateScheduleRequest,
  type CreateScheduleResponse,
  CreateScheduleResponseSchema,
  type DeleteScheduleRequest,
  type DeleteScheduleResponse,
  DeleteScheduleResponseSchema,
  type GetScheduleRequest,
  type GetScheduleResponse,
  GetScheduleResponseSchema,
  HistoryOrder,
  type ListSchedulesRequest,
  type ListSchedulesResponse,
  ListSchedulesResponseSchema,
  type PageCursor,
  type Schedule,
  ScheduleSchema,
  type UpdateScheduleRequest,
  type UpdateScheduleResponse,
  UpdateScheduleResponseSchema,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConversationContext } from "./context.js";
import { NEXT_FIRES_SHOWN, nextFireAfter, nextFires, scheduleCron } from "./schedules.js";
import type { PageRequest, SchedulePatch, ScheduleRecord } from "./store/types.js";

/** Items per page of schedules when the caller names no limit, and at most. */
const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;

/** The ConversationService handlers of schedules (docs/api/schedules.md); `conversationRoutes` spreads them in. */
export function scheduleHandlers(ctx: ConversationContext) {
  const schedules = ctx.store.schedules;
  const present = (record: ScheduleRecord) => toSchedule(ctx, record);
  const existing = async (request: { accountId: string; agentId: string; scheduleId: string }) => {
    const record = await schedules.getSchedule(request.accountId, request.agentId, request.scheduleId);
    if (!record) throw notFound(request.scheduleId);
    return record;
  };
  return {
    async createSchedule(request: CreateScheduleRequest): Promise<CreateScheduleResponse> {
      scope(request);
      const cron = scheduleCron(request.cron, request.timezone);
      checkMessage(request);
      const now = new Date();
      const record = await schedules.createSchedule({
        id: newId("schedule"),
        accountId: request.accountId,
        agentId: request.agentId,
        cron: request.cron,
        timezone: request.timezone,
        text: request.text,
        userId: request.userId ?? null,
        roomId: request.roomId ?? null,
        enabled: request.enabled,
        nextFireAt: request.enabled ? nextFireAfter(cron, now) : null,
        skippedFires: 0,
        lastFire: null,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      });
      return create(CreateScheduleResponseSchema, { schedule: await present(record) });
    },

    async getSchedule(request: GetScheduleRequest): Promise<GetScheduleResponse> {
      scope(request);
      return create(GetScheduleResponseSchema, { schedule: await present(await existing(request)) });
    },

    async listSchedules(request: ListSchedulesRequest): Promise<ListSchedulesResponse> {
      scope(request);
      const page = await schedules.listSchedules(request.accountId, request.agentId, pageOf(request.page));
      return create(ListSchedulesResponseSchema, {
        schedules: await Promise.all(page.items.map(present)),
        hasMore: page.hasMore,
      });
    },

    async updateSchedule(request: UpdateScheduleRequest): Promise<UpdateScheduleResponse> {
      scope(request);
      const before = await existing(request);
      const after = {
        cron: request.cron ?? before.cron,
        timezone: request.timezone ?? before.timezone,
        enabled: request.enabled ?? before.enabled,
      };
      const cron = scheduleCron(after.cron, after.timezone);
      const text = request.text ?? before.text;
      const userId = request.clearUserId ? null : (request.userId ?? before.userId);
      const roomId = request.clearRoomId ? null : (request.roomId ?? before.roomId);
      checkMessage({ text, userId: userId ?? undefined, roomId: roomId ?? undefined });
      const now = new Date();
      const patch: SchedulePatch = { text, userId, roomId, ...after, updatedAt: now.toISOString() };
      // A new expression, time zone or enabling counts from now: nothing missed meanwhile is run.
      const timing =
        after.cron !== before.cron || after.timezone !== before.timezone || after.enabled !== before.enabled;
      if (timing) patch.nextFireAt = after.enabled ? nextFireAfter(cron, now) : null;
      const record = await schedules.updateSchedule(
        request.accountId,
        request.agentId,
        request.scheduleId,
        patch,
      );
      if (!record) throw notFound(request.scheduleId);
      return create(UpdateScheduleResponseSchema, { schedule: await present(record) });
    },

    async deleteSchedule(request: DeleteScheduleRequest): Promise<DeleteScheduleResponse> {
      scope(request);
      if (!(await schedules.deleteSchedule(request.accountId, request.agentId, request.scheduleId))) {
        throw notFound(request.scheduleId);
      }
      return create(DeleteScheduleResponseSchema, {});
    },
  };
}

/** A schedule as the RPCs answer it: its next fire times computed now, its last fire with its message's status. */
async function toSchedule(ctx: ConversationContext, record: ScheduleRecord): Promise<Schedule> {
  const times =
    record.enabled && record.nextFireAt !== null
      ? [
          new Date(record.nextFireAt),
          ...nextFires(
            scheduleCron(record.cron, record.timezone),
            new Date(record.nextFireAt),
            NEXT_FIRES_SHOWN - 1,
          ),
        ]
      : [];
  const last = record.lastFire;
  let lastFire: Schedule["lastFire"];
  if (last) {
    let status = "skipped";
    let error = last.error;
    if (last.messageId !== null) {
      const state = await ctx.runs.background(record.accountId, record.agentId, last.messageId);
      const stored = state
        ? null
        : await ctx.store.getMessage(record.accountId, record.agentId, last.messageId);
      // Neither a run nor a stored reply: its run's record expired after it failed.
      status = state?.status ?? (stored ? "completed" : "failed");
      error = state?.error ?? (stored ? null : error);
    }
    lastFire = {
      $typeName: "agentry.conversation.v1.ScheduleFire",
      scheduledTime: timestampFromDate(new Date(last.scheduledAt)),
      fireTime: timestampFromDate(new Date(last.firedAt)),
      ...(last.messageId !== null ? { messageId: last.messageId } : {}),
      status,
      ...(error ? { errorCode: error.code, errorMessage: error.message } : {}),
    };
  }
  return create(ScheduleSchema, {
    id: record.id,
    agentId: record.agentId,
    cron: record.cron,
    timezone: record.timezone,
    text: record.text,
    ...(record.userId !== null ? { userId: record.userId } : {}),
    ...(record.roomId !== null ? { roomId: record.roomId } : {}),
    enabled: record.enabled,
    nextFireTimes: times.map(timestampFromDate),
    skippedFires: BigInt(record.skippedFires),
    ...(lastFire ? { lastFire } : {}),
    createTime: timestampFromDate(new Date(record.createdAt)),
    updateTime: timestampFromDate(new Date(record.updatedAt)),
  });
}

function scope(request: { accountId: string; agentId: string }): void {
  if (!request.accountId) throw invalid("account_id", "is required");
  if (!request.agentId) throw invalid("agent_id", "is required");
}

function checkMessage(message: { text: string; userId?: string | undefined; roomId?: string | undefined }) {
  if (message.text.trim() === "" || exceedsCharacters(message.text, MESSAGE_BOUNDS.textMaxLength)) {
    throw invalid("text", `must be 1 to ${MESSAGE_BOUNDS.textMaxLength} characters`);
  }
  for (const field of ["userId", "roomId"] as const) {
    const value = message[field];
    if (value !== undefined && (value === "" || exceedsCharacters(value, MESSAGE_BOUNDS.idMaxLength))) {
      throw invalid(field, `must be 1 to ${MESSAGE_BOUNDS.idMaxLength} characters`);
    }
  }
}

function pageOf(cursor: PageCursor | undefined): PageRequest {
  const limit = cursor?.limit || DEFAULT_PAGE;
  if (limit < 1 || limit > MAX_PAGE) throw invalid("limit", `must be 1 to ${MAX_PAGE}`);
  const before = cursor?.before || null;
  const after = cursor?.after || null;
  if (before !== null && after !== null) throw invalid("before", "cannot be combined with after");
  return { limit, before, after, order: cursor?.order === HistoryOrder.ASC ? "asc" : "desc" };
}

function invalid(field: string, issue: string): AppError {
  return new AppError("INVALID_REQUEST", `${field} ${issue}.`, { details: [{ field, issue }] });
}

function notFound(id: string): AppError {
  return new AppError("SCHEDULE_NOT_FOUND", `Schedule ${JSON.stringify(id)} does not exist.`);
}
