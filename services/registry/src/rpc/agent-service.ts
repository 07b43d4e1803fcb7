import { AGENT_BOUNDS, exceedsCharacters } from "@agentry/core";
import { AppError, invalid } from "@agentry/errors";
import { type AgentService, AgentSpecSchema, AgentStatus, type UpdateAgentRequest } from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AgentFields, AgentPatch, AgentRecord } from "../store/types.js";
import { AgentTextCache, agentInView, specFromProto, specJson } from "./agent-json.js";
import type { RegistryContext } from "./context.js";
import { agentToProto, fromTimestamp, listQueryFromProto, statusReasonFromProto } from "./convert.js";
import { createClaim, storedResponseToProto } from "./idempotency-service.js";

function notFound(id: string): AppError {
  return new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
}

function found(agent: AgentRecord | null, id: string): AgentRecord {
  if (!agent) throw notFound(id);
  return agent;
}

/**
 * The registry keeps its own invariants even though the gateway validates requests in detail first. Characters
 * are code points, as the gateway (and JSON Schema) count them: an emoji is one.
 */
function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || exceedsCharacters(trimmed, AGENT_BOUNDS.nameMaxLength)) {
    throw invalid("name", `must be 1 to ${AGENT_BOUNDS.nameMaxLength} characters after trimming`);
  }
  return name;
}

function checkFields(fields: AgentFields): AgentFields {
  checkName(fields.name);
  return fields;
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw invalid(field, "is required");
  return value;
}

/**
 * The patch named by an update mask: each path is a field of AgentSpec, and an optional field named but left
 * unset resets to null (the server default).
 */
export function patchFromUpdate(request: UpdateAgentRequest): AgentPatch {
  const spec = request.spec ?? create(AgentSpecSchema);
  const json = specJson(spec);
  const patch: AgentPatch = {};
  for (const path of request.updateMask?.paths ?? []) {
    switch (path) {
      case "name":
        patch.name = checkName(spec.name);
        break;
      case "bio":
        patch.bio = spec.bio;
        break;
      case "personality":
        patch.personality = json.personality;
        break;
      case "knowledge":
        patch.knowledge = spec.knowledge;
        break;
      case "goals":
        patch.goals = spec.goals;
        break;
      case "clients":
        patch.clients = json.clients;
        break;
      case "settings":
        patch.settings = json.settings;
        break;
      case "model_provider":
        patch.modelProvider = spec.modelProvider ?? null;
        break;
      case "model":
        patch.model = spec.model ?? null;
        break;
      case "plugins":
        patch.plugins = json.plugins;
        break;
      default:
        throw invalid("update_mask", `names ${JSON.stringify(path)}, which is not a field of AgentSpec`);
    }
  }
  if (request.status !== undefined) {
    if (request.status === AgentStatus.ACTIVE) patch.status = "active";
    else if (request.status === AgentStatus.INACTIVE) patch.status = "inactive";
    else throw invalid("status", "must be ACTIVE or INACTIVE; ERROR is set only by the service");
  }
  return patch;
}

export function agentService({ store, logger, changed }: RegistryContext): ServiceImpl<typeof AgentService> {
  const texts = new AgentTextCache();
  return {
    async createAgent(request) {
      const fields = checkFields(specFromProto(required(request.spec, "spec")));
      if (request.idempotency) {
        const created = await store.createAgentUnderKey(
          request.accountId,
          fields,
          createClaim(request.idempotency),
        );
        if (created.outcome === "stored") {
          return { storedResponse: storedResponseToProto(created.response), keyClaimed: true };
        }
        const replayed = created.outcome === "replayed";
        if (!replayed) {
          logger.info({ agentId: created.created.id, accountId: created.created.accountId }, "agent created");
        }
        return { agent: agentToProto(created.created), replayed, keyClaimed: true };
      }
      const agent = await store.createAgent(
        request.accountId,
        fields,
        request.idempotencyKeyHash ? { idempotencyKeyHash: request.idempotencyKeyHash } : undefined,
      );
      logger.info({ agentId: agent.id, accountId: agent.accountId }, "agent created");
      return { agent: agentToProto(agent) };
    },

    async getAgent(request) {
      const agent = found(await store.getAgent(request.accountId, request.id), request.id);
      return { agent: agentInView(agent, request.view, texts) };
    },

    async listAgents(request) {
      const page = await store.listAgents(request.accountId, listQueryFromProto(request));
      return {
        agents: page.items.map((agent) => agentInView(agent, request.view, texts)),
        totalSize: page.total,
      };
    },

    async updateAgent(request) {
      const patch = patchFromUpdate(request);
      const expected = request.expectedUpdateTime ? fromTimestamp(request.expectedUpdateTime) : undefined;
      const agent = found(
        await store.updateAgent(request.accountId, request.id, patch, expected),
        request.id,
      );
      return { agent: agentToProto(agent) };
    },

    async deleteAgent(request) {
      const expected = request.expectedUpdateTime ? fromTimestamp(request.expectedUpdateTime) : undefined;
      if (!(await store.deleteAgent(request.accountId, request.id, expected))) throw notFound(request.id);
      logger.info({ agentId: request.id, accountId: request.accountId }, "agent deleted");
      changed();
      return {};
    },

    async reportAgentHealth(request) {
      const failure = request.failure ? statusReasonFromProto(request.failure) : null;
      const agent = found(await store.reportAgentHealth(request.accountId, request.id, failure), request.id);
      return { agent: agentToProto(agent) };
    },
  };
}
