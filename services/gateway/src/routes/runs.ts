import type { Run } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import { CURSOR_NOTE } from "../openapi/operations.js";
import { cursorLimit, cursorOrder, cursors, oneCursor } from "../validation/history.js";
import { cursorList, id, nullableTimestamp, success, timestamp } from "./common.schemas.js";
import { component, defineRoute, type Route } from "./define.js";
import { callersAgent, pageCursor } from "./history.js";

const RUN_STATUSES = ["pending", "requires_action", "completed", "failed", "cancelled"] as const;

/** An agent's run: one streamed or background message, while its record is kept (docs/api/messages-and-streams.md). */
const AgentRun = z
  .object({
    id: id("msg", "The run's id, the cursor of this list: its reply's id, the same as `messageId`"),
    messageId: id(
      "msg",
      "The reply's id (a background message's `messageId`), as `GET …/messages/{messageId}` and `GET …/messages/{messageId}/events` take it",
    ),
    status: z.enum(RUN_STATUSES).meta({
      description:
        "`pending`: being generated; `requires_action`: paused until its tool calls are approved or refused (`POST /v1/agents/{agentId}/messages/{messageId}/approve`); `completed`: its reply is stored; `failed`: it ended with `error`; `cancelled`: stopped by `POST /v1/agents/{agentId}/runs/cancel`.",
    }),
    background: z
      .boolean()
      .meta({ description: "Whether it was sent with `background: true` (else streamed)." }),
    userId: z.string().nullable().meta({ description: "The user id it was sent with; null when none." }),
    roomId: z.string().nullable().meta({ description: "The room id it was sent with; null when none." }),
    createdAt: timestamp("When it was sent."),
    endedAt: nullableTimestamp("When it ended; null while pending."),
    error: z.object({ code: z.string(), message: z.string() }).nullable().meta({
      description: "A failed or cancelled run's error, as its stream's `error` event gave it.",
    }),
    takeovers: z.number().int().min(0).meta({
      description: "How many times another process took it over after the one generating it stopped.",
    }),
  })
  .meta({ description: "A run: a streamed or background message of the agent." });

const listRunsQuery = z
  .strictObject({
    status: z
      .enum(RUN_STATUSES, { error: `must be one of ${RUN_STATUSES.join(", ")}` })
      .optional()
      .meta({ description: "Only the runs of this status." }),
    limit: cursorLimit,
    ...cursors("message", "msg", "run"),
    order: cursorOrder,
  })
  .superRefine(oneCursor);

function presentRun(run: Run) {
  return {
    id: run.messageId,
    messageId: run.messageId,
    status: run.status as (typeof RUN_STATUSES)[number],
    background: run.background,
    userId: run.userId ?? null,
    roomId: run.roomId ?? null,
    createdAt: run.createTime ? timestampDate(run.createTime).toISOString() : "",
    endedAt: run.endTime ? timestampDate(run.endTime).toISOString() : null,
    error: run.errorCode !== undefined ? { code: run.errorCode, message: run.errorMessage ?? "" } : null,
    takeovers: run.takeovers,
  };
}

export const runRoutes: Route[] = [
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/runs",
    scope: "history:read",
    limit: "listPerMinute",
    operationId: "listRuns",
    sdk: { resource: ["agents", "runs"], method: "list" },
    tag: "Messages",
    summary: "List an agent's runs",
    description: `The agent's runs (its streamed and background messages, while their records are kept: an hour after they end by default, a failed background message a day at least), newest first unless \`order=asc\`; \`status\` keeps only those of one status. ${CURSOR_NOTE}`,
    query: listRunsQuery,
    pagination: "cursor",
    success: {
      status: 200,
      schema: component("AgentRunListResponse", cursorList(AgentRun)),
      description: "One page of runs.",
    },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
    async handler(input) {
      const agentId = await callersAgent(input);
      const query = input.query();
      const response = await input.gateway.conversations.listRuns(
        {
          accountId: input.principal.accountId,
          agentId,
          ...(query.status !== undefined ? { status: query.status } : {}),
          page: pageCursor(query),
        },
        input.rpc,
      );
      input.ctx.body = {
        success: true,
        data: response.runs.map(presentRun),
        pagination: { limit: query.limit, hasMore: response.hasMore },
      };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/v1/agents/:agentId/runs/cancel",
    // Stopping every user's messages of the agent is an operator's act on the agent, like pausing it, not a
    // sender's: a key that may only send cannot stop other callers' conversations.
    scope: "agents:write",
    limit: "updatePerMinute",
    operationId: "cancelAgentRuns",
    sdk: { resource: ["agents", "runs"], method: "cancel" },
    tag: "Messages",
    summary: "Cancel every run of an agent",
    description:
      "The kill switch: every pending run of the agent (streamed and background messages) ends `cancelled`, nothing of it stored; its stream ends with an `error` event (`AGENT_UNAVAILABLE`). A message generated by another process of the deployment, streamed or background, stops within a few seconds (at that process's next lease renewal, `RUN_LEASE_RENEW_MS`). Answers how many runs were pending; cancelling again answers 0.",
    success: {
      status: 200,
      schema: component(
        "CancelAgentRunsResponse",
        success(
          z.object({
            cancelled: z
              .number()
              .int()
              .min(0)
              .meta({ description: "How many runs were pending and are now cancelled." }),
          }),
        ),
      ),
      description: "The runs cancelled.",
    },
    errors: ["AGENT_NOT_FOUND"],
    async handler(input) {
      const agentId = await callersAgent(input);
      const { cancelled } = await input.gateway.conversations.cancelAgentRuns(
        { accountId: input.principal.accountId, agentId },
        input.rpc,
      );
      input.ctx.body = { success: true, data: { cancelled } };
    },
  }),
];
