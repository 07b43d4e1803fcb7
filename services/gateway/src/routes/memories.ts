import { isId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { HistoryOrder, type Memory } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { readJsonBody } from "../http/body.js";
import { parseOrThrow } from "../validation/issues.js";
import { createMemoryBody, type ListMemoriesQuery, listMemoriesQuery } from "../validation/memories.js";
import type { HandlerInput, Route } from "./table.js";

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
async function callersAgent({ ctx, gateway, principal, rpc }: HandlerInput) {
  const id = ctx.params.agentId ?? "";
  if (!isId("agent", id))
    throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
  const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
  const limit = agent.spec?.settings?.memoryLimit;
  return { id, memoryLimit: typeof limit === "number" ? limit : 0 };
}

async function listMemories(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agent = await callersAgent(input);
  const query: ListMemoriesQuery = parseOrThrow(listMemoriesQuery, ctx.query, "query parameters");
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
}

async function createMemory(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agent = await callersAgent(input);
  const body = parseOrThrow(createMemoryBody, await readJsonBody(ctx), "request body");
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
}

async function deleteMemory(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const agent = await callersAgent(input);
  const memoryId = ctx.params.memoryId ?? "";
  if (!isId("memory", memoryId)) {
    throw new AppError("MEMORY_NOT_FOUND", `Memory ${JSON.stringify(memoryId)} does not exist.`);
  }
  await gateway.conversations.deleteMemory(
    { accountId: principal.accountId, agentId: agent.id, memoryId },
    rpc,
  );
  ctx.body = { success: true, data: { id: memoryId, deleted: true } };
}

/** What an agent remembers of its users (docs/api/memories.md). */
export const memoryRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/agents/:agentId/memories",
    scope: "history:read",
    limit: "listPerMinute",
    handle: listMemories,
  },
  {
    method: "POST",
    path: "/v1/agents/:agentId/memories",
    scope: "history:delete",
    limit: "createPerMinute",
    handle: createMemory,
  },
  {
    method: "DELETE",
    path: "/v1/agents/:agentId/memories/:memoryId",
    scope: "history:delete",
    limit: "deletePerMinute",
    handle: deleteMemory,
  },
];
