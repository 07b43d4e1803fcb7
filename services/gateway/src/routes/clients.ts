import { clientTypes, isId, isPlatform } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { ClientState, type ClientStatus } from "@agentry/proto";
import { toJson } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { defineRoute, type Route } from "./define.js";

const STATE_NAMES: Record<ClientState, string> = {
  [ClientState.UNSPECIFIED]: "stopped",
  [ClientState.CONNECTED]: "connected",
  [ClientState.CONNECTING]: "connecting",
  [ClientState.STOPPED]: "stopped",
  [ClientState.FAILED]: "failed",
  [ClientState.INERT]: "inert",
};

const iso = (time: Timestamp | undefined) => (time ? timestampDate(time).toISOString() : null);

function presentClient(status: ClientStatus) {
  return {
    type: status.type,
    state: STATE_NAMES[status.state],
    connectedAt: iso(status.connectTime),
    lastEventAt: iso(status.lastEventTime),
    lastError: status.lastError
      ? { code: status.lastError.code, message: status.lastError.message, at: iso(status.lastError.time) }
      : null,
  };
}

export const clientRoutes: Route[] = [
  /** `GET /v1/agents/{agentId}/clients`: each platform client of the agent and how it stands. */
  defineRoute({
    method: "GET",
    path: "/v1/agents/:agentId/clients",
    scope: "agents:read",
    limit: "getPerMinute",
    sdk: { resource: ["agents", "clients"], method: "list" },
    operationId: "listAgentClients",
    tag: "Agents",
    summary: "List an agent's platform clients",
    description:
      "Each platform the agent's `clients` names, in order, and how its connector stands: `connected` (polling or holding the platform session), `connecting` (starting, or waiting for another process's lease on the bot token), `stopped` (the agent is not active or lacks the platform's secrets, e.g. `TELEGRAM_BOT_TOKEN`), `failed` (the platform rejected the token: the agent is `error` with `CLIENT_AUTH_FAILED` until a PATCH or a new secret) or `inert` (a platform the service does not run).",
    success: { status: 200, schema: "ClientStatusListResponse", description: "The agent's clients." },
    errors: ["AGENT_NOT_FOUND"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const id = input.params.agentId;
      if (!isId("agent", id))
        throw new AppError("AGENT_NOT_FOUND", `Agent ${JSON.stringify(id)} does not exist.`);
      const { agent } = await gateway.agents.getAgent({ accountId: principal.accountId, id }, rpc);
      const clients = agent?.spec?.clients ? toJson(ValueSchema, agent.spec.clients) : null;
      const types = clientTypes(clients);
      if (!gateway.connectors) {
        // No connectors service in this deployment: nothing runs the platforms.
        ctx.body = {
          success: true,
          data: types.map((type) => ({
            type,
            state: isPlatform(type) ? "stopped" : "inert",
            connectedAt: null,
            lastEventAt: null,
            lastError: null,
          })),
        };
        return;
      }
      const listed = await gateway.connectors.listClients({ agentId: id, types }, rpc);
      ctx.body = { success: true, data: listed.clients.map(presentClient) };
    },
  }),
];
