import { isId, MEMORY_BOUNDS } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { HistoryOrder, type Memory } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { CURSOR_NOTE } from "../openapi/operations.js";
import { createMemoryBody, listMemoriesQuery } from "../validation/memories.js";
import { defineRoute, type RequestContext, type Route } from "./define.js";

/** A memory as every route presents it (docs/api/memories.md, "The memory object"), the user export included. */
export function presentMemory(memory: Memory) {
  return {
    id: memory.id,
    agentId: memory.agentId,
    userId: memory.userId,
    text: memory.text,
    source: memory.sourceMessageId ? { messageId: memory.sourceMessageId } : null,
    createdAt: (memory.createTime ? timestampDate(memory.createTime) : new Date(0)).toISOString(),
  };
}

/**
 * The agent of a memory route, once it is known to be the caller's (another account's is answered as missing),
 * with its `settings.memoryLimit` (0: unset).
 */
async function callersAgent({ ctx, gateway, principal, rpc }: RequestContext) {
  const id = ctx.params.agentId ?? "";
  if (!isId("agent", id))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
  const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
  const limit = agent.spec?.settings?.memoryLimit;
  return { id, memoryLimit: typeof limit === "number" ? limit : 0 };
}

/** What an agent remembers of its users (docs/api/memories.md). */
export const memoryRoutes: Route[] = [
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/memories",
    scope: "history:read",
    limit: "listPerMinute",
    operationId: "listMemories",
    tag: "History",
    summary: "List an agent's memories",
    description: `What the agent remembers of its users: facts it learnt after turns, or that were added by hand, newest first unless \`order=asc\`. \`userId\`: only that user's; \`q\`: only those containing every word of the text (full-text search). ${CURSOR_NOTE}`,
    query: listMemoriesQuery,
    pagination: "cursor",
    success: { status: 200, schema: "MemoryListResponse", description: "One page of memories." },
    errors: ["INVALID_REQUEST", "AGENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agent = await callersAgent(input);
      const query = input.query();
      const response = await gateway.conversations.listMemories(
        {
          accountId: principal.accountId,
          agentId: agent.id,
          ...(query.userId !== undefined ? { userId: query.userId } : {}),
          ...(query.q !== undefined ? { query: query.q } : {}),
          page: {
            limit: query.limit,
            before: query.before ?? "",
            after: query.after ?? "",
            order: query.order === "asc" ? HistoryOrder.ASC : HistoryOrder.DESC,
          },
        },
        rpc,
      );
      ctx.body = {
        success: true,
        data: response.memories.map(presentMemory),
        pagination: { limit: query.limit, hasMore: response.hasMore },
      };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/v1/agents/:agentId/memories",
    scope: "history:delete",
    limit: "createPerMinute",
    operationId: "createMemory",
    tag: "History",
    summary: "Add a memory",
    description: `Adds a fact about a user by hand; it reaches that user's later prompts with this agent when relevant. A fact the user already has (the same text, ignoring case, punctuation and spacing) is not stored twice: the answer is the one stored. Beyond the agent's \`settings.memoryLimit\` per user (${MEMORY_BOUNDS.memoryLimit.default} by default) the user's oldest memories are deleted.`,
    body: { schema: createMemoryBody, component: "CreateMemoryRequest" },
    success: {
      status: 201,
      schema: "MemoryResponse",
      description: "The memory stored, or the same one the user already had.",
    },
    errors: ["AGENT_NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agent = await callersAgent(input);
      const body = await input.body();
      const { memory } = await gateway.conversations.createMemory(
        {
          accountId: principal.accountId,
          agentId: agent.id,
          userId: body.userId,
          text: body.text,
          limit: agent.memoryLimit,
        },
        rpc,
      );
      // A fact the user already had is answered as it is stored: adding it again changes nothing.
      ctx.status = 201;
      ctx.body = { success: true, data: presentMemory(memory!) };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/agents/:agentId/memories/:memoryId",
    params: {
      memoryId: {
        description:
          "The memory's id (`mem_…`). An id of another agent's or account's memory, or not of that form, is answered `404 MEMORY_NOT_FOUND`.",
        example: "mem_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
      },
    },
    scope: "history:delete",
    limit: "deletePerMinute",
    operationId: "deleteMemory",
    tag: "History",
    summary: "Delete a memory",
    description:
      "Deletes one memory: it reaches no later prompt, and the same fact may be learnt again. Deleting it again is answered `404 MEMORY_NOT_FOUND`.",
    success: { status: 200, schema: "MemoryDeletedResponse", description: "The memory was deleted." },
    errors: ["AGENT_NOT_FOUND", "MEMORY_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const agent = await callersAgent(input);
      const memoryId = input.params.memoryId;
      if (!isId("memory", memoryId)) {
        throw new AppError("MEMORY_NOT_FOUND", `Memory ${JSON.stringify(memoryId)} does not exist.`);
      }
      await gateway.conversations.deleteMemory(
        { accountId: principal.accountId, agentId: agent.id, memoryId },
        rpc,
      );
      ctx.body = { success: true, data: { id: memoryId, deleted: true } };
    },
  }),
];
