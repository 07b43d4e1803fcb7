import { AppError, invalid } from "@agentry/errors";
import type { PluginService } from "@agentry/proto";
import type { ServiceImpl } from "@connectrpc/connect";
import { searchWords } from "../store/knowledge.js";
import type { SecretInfo } from "../store/types.js";
import type { RegistryContext } from "./context.js";
import { toTimestamp } from "./convert.js";

/** Bounds of PluginService's inputs (see plugin_service.proto). */
export const SECRET_BOUNDS = { nameMaxLength: 64, valueMaxLength: 4096, revealMaxNames: 64 } as const;
const SECRET_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const QUERY_MAX_LENGTH = 1000;
const SEARCH_MAX_LIMIT = 50;

function secretName(name: string, field = "name"): string {
  if (!SECRET_NAME.test(name)) throw invalid(field, "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -");
  return name;
}

function agentNotFound(id: string): AppError {
  return new AppError("AGENT_NOT_FOUND", `Agent ${id} does not exist.`);
}

function found<T>(value: T | null, agentId: string): T {
  if (value === null) throw agentNotFound(agentId);
  return value;
}

const info = (secret: SecretInfo) => ({ name: secret.name, updatedAt: toTimestamp(secret.updatedAt) });

/**
 * The registry's PluginService: agents' secrets, sealed by the vault before the store sees them and opened only
 * for RevealSecrets, and full-text search over agents' knowledge. No value is ever put in an error or a log.
 */
export function pluginService({ store, secrets }: RegistryContext): ServiceImpl<typeof PluginService> {
  return {
    async putSecret({ accountId, agentId, name, value }) {
      secretName(name);
      if (value.length === 0 || value.length > SECRET_BOUNDS.valueMaxLength) {
        throw invalid("value", `must be 1 to ${SECRET_BOUNDS.valueMaxLength} characters`);
      }
      const stored = await store.putAgentSecret(accountId, agentId, name, secrets.seal(agentId, name, value));
      return { secret: info(found(stored, agentId)) };
    },

    async listSecrets({ accountId, agentId }) {
      return { secrets: found(await store.listAgentSecrets(accountId, agentId), agentId).map(info) };
    },

    async deleteSecret({ accountId, agentId, name }) {
      secretName(name);
      const deleted = found(await store.deleteAgentSecret(accountId, agentId, name), agentId);
      if (!deleted) throw new AppError("SECRET_NOT_FOUND", `Agent ${agentId} has no secret named ${name}.`);
      return {};
    },

    async revealSecrets({ accountId, agentId, names }) {
      if (names.length > SECRET_BOUNDS.revealMaxNames) {
        throw invalid("names", `must hold at most ${SECRET_BOUNDS.revealMaxNames} names`);
      }
      for (const [i, name] of names.entries()) secretName(name, `names[${i}]`);
      const sealed = found(await store.sealedAgentSecrets(accountId, agentId, names), agentId);
      const values: Record<string, string> = {};
      for (const [name, stored] of Object.entries(sealed)) values[name] = secrets.open(agentId, name, stored);
      return { values };
    },

    async searchKnowledge({ accountId, agentId, query, limit }) {
      if (query.trim().length === 0 || query.length > QUERY_MAX_LENGTH) {
        throw invalid("query", `must be 1 to ${QUERY_MAX_LENGTH} characters`);
      }
      if (!(limit >= 1 && limit <= SEARCH_MAX_LIMIT))
        throw invalid("limit", `must be 1 to ${SEARCH_MAX_LIMIT}`);
      const hits = found(await store.searchKnowledge(accountId, agentId, searchWords(query), limit), agentId);
      return { hits };
    },
  };
}
