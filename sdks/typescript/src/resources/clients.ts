import type { RequestOptions, Transport } from "../core.js";
import type { ClientStatus } from "../types.js";
import { idSegment } from "./path.js";

/** An agent's platform clients (Telegram, Discord, Slack): how the connector of each stands. */
export class AgentClients {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Each platform the agent's `clients` names, in order, with its connector's state.
   *
   * ```ts
   * const [telegram] = await client.agents.clients.list(agentId);
   * if (telegram?.state === "failed") console.log(telegram.lastError?.message);
   * ```
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   */
  async list(agentId: string, options?: RequestOptions): Promise<ClientStatus[]> {
    const body = (await this.#transport.json(
      { method: "GET", path: `/agents/${idSegment("agentId", agentId)}/clients` },
      options,
    )) as { data: ClientStatus[] };
    return body.data;
  }
}
