import {
  ClientErrorSchema,
  type ClientState,
  ClientStatusSchema,
  ConnectorService,
  ClientState as State,
} from "@agentry/proto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import type { ClientStatus } from "../domain/status.js";

/** What the handlers read: the clients this process runs. */
export interface ConnectorsRpcContext {
  clients(agentId: string, types: readonly string[]): ClientStatus[];
  deliver(type: string, agentId: string, secretToken: string, body: string): Promise<void>;
}

const STATES: Record<ClientStatus["state"], ClientState> = {
  connected: State.CONNECTED,
  connecting: State.CONNECTING,
  stopped: State.STOPPED,
  failed: State.FAILED,
  inert: State.INERT,
};

const time = (iso: string | null) => (iso ? timestampFromDate(new Date(iso)) : undefined);

export function clientStatusToProto(status: ClientStatus) {
  return create(ClientStatusSchema, {
    type: status.type,
    state: STATES[status.state],
    connectTime: time(status.connectedAt),
    lastEventTime: time(status.lastEventAt),
    lastError: status.lastError
      ? create(ClientErrorSchema, {
          code: status.lastError.code,
          message: status.lastError.message,
          time: time(status.lastError.at),
        })
      : undefined,
  });
}

/** Every RPC the connectors service serves. */
export function connectorsRoutes(ctx: ConnectorsRpcContext): (router: ConnectRouter) => void {
  return (router) => {
    router.service(ConnectorService, {
      async listClients(request) {
        return { clients: ctx.clients(request.agentId, request.types).map(clientStatusToProto) };
      },
      async deliverUpdate(request) {
        await ctx.deliver(request.type, request.agentId, request.secretToken, request.body);
        return {};
      },
    });
  };
}
