import type { RequestOptions, Transport } from "../core.js";
import { type CursorPagePromise, collect, listCursorPages } from "../pagination.js";
import type { AgentRun, AgentRunListParams, AgentRunsCancelled } from "../types.js";
import { idSegment } from "./path.js";

/**
 * An agent's runs: its streamed and background messages, while their records are kept. Listing needs
 * `history:read`; cancelling them all (the kill switch), `agents:write`.
 */
export class AgentRuns {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Lists the agent's runs, newest first, a page at a time (default 20). Await the result for one page, or
   * iterate it for every run:
   *
   * ```ts
   * for await (const run of client.agents.runs.list(agentId, { status: "pending" })) {
   *   console.log(run.messageId, run.background, run.createdAt);
   * }
   * ```
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {BadRequestError} an unknown status, a query value out of range, or a cursor that is not a run of this list
   */
  list(
    agentId: string,
    params: AgentRunListParams = {},
    options?: RequestOptions,
  ): CursorPagePromise<AgentRun> {
    const path = `/agents/${idSegment("agentId", agentId)}/runs`;
    return listCursorPages<AgentRun>(this.#transport, path, params, options);
  }

  /** Every run that `list` would walk through, fetched page by page and returned in one array. */
  listAll(agentId: string, params: AgentRunListParams = {}, options?: RequestOptions): Promise<AgentRun[]> {
    return collect(this.list(agentId, params, options));
  }

  /**
   * The kill switch: every pending run of the agent ends `cancelled` (its stream with an `error` event), on
   * whichever process generates it, within a few seconds. Answers how many were pending.
   *
   * ```ts
   * const { cancelled } = await client.agents.runs.cancel(agentId);
   * ```
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {PermissionDeniedError} without the `agents:write` scope
   */
  async cancel(agentId: string, options?: RequestOptions): Promise<AgentRunsCancelled> {
    const body = (await this.#transport.json(
      { method: "POST", path: `/agents/${idSegment("agentId", agentId)}/runs/cancel` },
      options,
    )) as { data: AgentRunsCancelled };
    return body.data;
  }
}
