import { clientTypes, isId, isPlatform } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { ClientState, type ClientStatus } from "@agentry/proto";
import { toJson } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { HandlerInput, Route } from "./table.js";

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

/** `GET /v1/agents/{agentId}/clients`: each platform client of the agent and how it stands. */
async function listClients(input: HandlerInput): Promise<void> {
  const { ctx, gateway, principal, rpc } = input;
  const id = ctx.params.agentId ?? "";
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
}

export const clientRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/agents/:agentId/clients",
    scope: "agents:read",
    limit: "getPerMinute",
    handle: listClients,
  },
];
