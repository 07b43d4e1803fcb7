import { isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { Schedule as ScheduleMessage } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { CURSOR_NOTE } from "../openapi/operations.js";
import { cursorList, success } from "./common.schemas.js";
import { component, defineRoute, type Route } from "./define.js";
import { callersAgent, pageCursor } from "./history.js";
import {
  createScheduleBody,
  listSchedulesQuery,
  NEXT_FIRES_SHOWN,
  Schedule,
  ScheduleDeleted,
  updateScheduleBody,
} from "./schedules.schemas.js";

const SCHEDULE_PARAM = {
  scheduleId: {
    description:
      "The schedule's id (`sch_…`). An id of another agent's or account's schedule, or not of that form, is answered `404 SCHEDULE_NOT_FOUND`.",
    example: "sch_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
};

/** A schedule as every route presents it (docs/api/schedules.md, "The schedule object"). */
function presentSchedule(schedule: ScheduleMessage) {
  const iso = (time: Parameters<typeof timestampDate>[0]) => timestampDate(time).toISOString();
  const next = schedule.nextFireTimes.map(iso);
  const last = schedule.lastFire;
  return {
    id: schedule.id,
    agentId: schedule.agentId,
    cron: schedule.cron,
    timezone: schedule.timezone,
    text: schedule.text,
    userId: schedule.userId ?? null,
    roomId: schedule.roomId ?? null,
    enabled: schedule.enabled,
    nextFireAt: next[0] ?? null,
    nextFireTimes: next,
    skippedFires: Number(schedule.skippedFires),
    lastFire: last
      ? {
          scheduledAt: last.scheduledTime ? iso(last.scheduledTime) : "",
          firedAt: last.fireTime ? iso(last.fireTime) : "",
          messageId: last.messageId ?? null,
          status: last.status as "pending" | "completed" | "failed" | "skipped",
          error:
            last.errorCode !== undefined ? { code: last.errorCode, message: last.errorMessage ?? "" } : null,
        }
      : null,
    createdAt: schedule.createTime ? iso(schedule.createTime) : "",
    updatedAt: schedule.updateTime ? iso(schedule.updateTime) : "",
  };
}

function scheduleId(id: string): string {
  if (!isId("schedule", id)) {
    throw new AppError("SCHEDULE_NOT_FOUND", `Schedule ${JSON.stringify(id)} does not exist.`);
  }
  return id;
}

const ScheduleResponse = component("ScheduleResponse", success(Schedule));

/**
 * An agent's schedules (docs/api/schedules.md): writing them is configuring the agent, and so is reading them
 * (their text is the agent's standing instructions), so every operation takes `agents:write`.
 */
export const scheduleRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/agents/:agentId/schedules",
    scope: "agents:write",
    limit: "createPerMinute",
    operationId: "createSchedule",
    sdk: { resource: ["agents", "schedules"], method: "create" },
    tag: "Agents",
    summary: "Create a schedule",
    description: `Sends \`text\` to the agent at each time of a cron expression in an IANA time zone, as one background message per fire (its \`context.schedule\` is \`{id, firedAt}\`), run once across every process of the deployment. Its reply is stored in the conversation of \`userId\` and \`roomId\` and reaches webhooks as \`message.completed\` (or \`message.failed\`). A fire missed while the service was down runs once at start if less than an hour late; later ones are skipped and counted in \`skippedFires\`. The answer shows the next ${NEXT_FIRES_SHOWN} fire times.`,
    body: { schema: createScheduleBody, component: "CreateScheduleRequest" },
    success: { status: 201, schema: ScheduleResponse, description: "The schedule created." },
    errors: ["AGENT_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const agentId = await callersAgent(input);
      const body = await input.body();
      const { schedule } = await input.gateway.conversations.createSchedule(
        {
          accountId: input.principal.accountId,
          agentId,
          cron: body.cron,
          timezone: body.timezone,
          text: body.text,
          ...(body.userId !== undefined ? { userId: body.userId } : {}),
          ...(body.roomId !== undefined ? { roomId: body.roomId } : {}),
          enabled: body.enabled,
        },
        input.rpc,
      );
      input.ctx.status = 201;
      input.ctx.body = { success: true, data: presentSchedule(schedule!) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/schedules",
    scope: "agents:write",
    limit: "listPerMinute",
    operationId: "listSchedules",
    sdk: { resource: ["agents", "schedules"], method: "list" },
    tag: "Agents",
    summary: "List an agent's schedules",
    description: `The agent's schedules, newest first unless \`order=asc\`, each with its next fire times and last fire. ${CURSOR_NOTE}`,
    query: listSchedulesQuery,
    pagination: "cursor",
    success: {
      status: 200,
      schema: component("ScheduleListResponse", cursorList(Schedule)),
      description: "One page of schedules.",
    },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
    async handler(input) {
      const agentId = await callersAgent(input);
      const query = input.query();
      const response = await input.gateway.conversations.listSchedules(
        { accountId: input.principal.accountId, agentId, page: pageCursor(query) },
        input.rpc,
      );
      input.ctx.body = {
        success: true,
        data: response.schedules.map(presentSchedule),
        pagination: { limit: query.limit, hasMore: response.hasMore },
      };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/schedules/:scheduleId",
    params: SCHEDULE_PARAM,
    scope: "agents:write",
    limit: "getPerMinute",
    operationId: "getSchedule",
    sdk: { resource: ["agents", "schedules"], method: "get" },
    tag: "Agents",
    summary: "Get a schedule",
    description: `One schedule: its next ${NEXT_FIRES_SHOWN} fire times, how many fires were skipped, and its last fire with the status of the message it sent.`,
    success: { status: 200, schema: "ScheduleResponse", description: "The schedule." },
    errors: ["AGENT_NOT_FOUND", "SCHEDULE_NOT_FOUND"],
    async handler(input) {
      const agentId = await callersAgent(input);
      const { schedule } = await input.gateway.conversations.getSchedule(
        { accountId: input.principal.accountId, agentId, scheduleId: scheduleId(input.params.scheduleId) },
        input.rpc,
      );
      input.ctx.body = { success: true, data: presentSchedule(schedule!) };
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/v1/agents/:agentId/schedules/:scheduleId",
    params: SCHEDULE_PARAM,
    scope: "agents:write",
    limit: "updatePerMinute",
    operationId: "updateSchedule",
    sdk: { resource: ["agents", "schedules"], method: "update" },
    tag: "Agents",
    summary: "Update a schedule",
    description:
      "Changes the fields given. A new `cron` or `timezone`, or `enabled: true` again, counts from now: fires missed while it was disabled are not run. `enabled: false` stops its fires.",
    body: { schema: updateScheduleBody, component: "UpdateScheduleRequest" },
    success: { status: 200, schema: "ScheduleResponse", description: "The schedule as it now is." },
    errors: ["AGENT_NOT_FOUND", "SCHEDULE_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const agentId = await callersAgent(input);
      const id = scheduleId(input.params.scheduleId);
      const body = await input.body();
      const { schedule } = await input.gateway.conversations.updateSchedule(
        {
          accountId: input.principal.accountId,
          agentId,
          scheduleId: id,
          ...(body.cron !== undefined ? { cron: body.cron } : {}),
          ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
          ...(body.text !== undefined ? { text: body.text } : {}),
          ...(typeof body.userId === "string" ? { userId: body.userId } : {}),
          ...(typeof body.roomId === "string" ? { roomId: body.roomId } : {}),
          ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          clearUserId: body.userId === null,
          clearRoomId: body.roomId === null,
        },
        input.rpc,
      );
      input.ctx.body = { success: true, data: presentSchedule(schedule!) };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/agents/:agentId/schedules/:scheduleId",
    params: SCHEDULE_PARAM,
    scope: "agents:write",
    limit: "deletePerMinute",
    operationId: "deleteSchedule",
    sdk: { resource: ["agents", "schedules"], method: "delete" },
    tag: "Agents",
    summary: "Delete a schedule",
    description:
      "Deletes a schedule: it fires no more (a message it already sent runs to its end). Deleting it again is answered `404 SCHEDULE_NOT_FOUND`. Deleting the agent deletes its schedules.",
    success: {
      status: 200,
      schema: component("ScheduleDeletedResponse", success(ScheduleDeleted)),
      description: "The schedule was deleted.",
    },
    errors: ["AGENT_NOT_FOUND", "SCHEDULE_NOT_FOUND"],
    async handler(input) {
      const agentId = await callersAgent(input);
      const id = scheduleId(input.params.scheduleId);
      await input.gateway.conversations.deleteSchedule(
        { accountId: input.principal.accountId, agentId, scheduleId: id },
        input.rpc,
      );
      input.ctx.body = { success: true, data: { id, deleted: true } };
    },
  }),
];
