import type { RequestOptions, Transport } from "../core.js";
import { Page, PagePromise } from "../pagination.js";
import type {
  Agent,
  AgentCreateParams,
  AgentDeleted,
  AgentListParams,
  AgentUpdateParams,
  Pagination,
} from "../types.js";
import { Messages } from "./messages.js";
import { idSegment } from "./path.js";

interface DataEnvelope<T> {
  data: T;
}

interface ListEnvelope<T> {
  data: T[];
  pagination: Pagination;
}

/** Agents: create, list, read, update and delete; `messages` talks to them. */
export class Agents {
  /** Messages to an agent, answered at once or streamed. */
  readonly messages: Messages;
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
    this.messages = new Messages(transport);
  }

  /**
   * Creates an agent. It starts `active`.
   *
   * Not retried after a timeout or a 5xx, which may come after the agent was created; retried on 429 and when
   * the connection could not be made at all.
   *
   * @throws {BadRequestError} invalid fields (`details` names them)
   * @throws {PermissionDeniedError} `FORBIDDEN` without the `agents:write` scope; `INSUFFICIENT_QUOTA` when the
   *   account holds its maximum number of agents
   */
  async create(params: AgentCreateParams, options?: RequestOptions): Promise<Agent> {
    const body = (await this.#transport.json(
      { method: "POST", path: "/agents", body: params, safety: "unsafe" },
      options,
    )) as DataEnvelope<Agent>;
    return body.data;
  }

  /**
   * Reads an agent.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND` when the account has no such agent
   */
  async get(agentId: string, options?: RequestOptions): Promise<Agent> {
    const body = (await this.#transport.json(
      { method: "GET", path: `/agents/${idSegment("agentId", agentId)}`, safety: "idempotent" },
      options,
    )) as DataEnvelope<Agent>;
    return body.data;
  }

  /**
   * Lists the account's agents, a page at a time (default 20, newest first). Await the result for one page, or
   * iterate it for every agent of every page:
   *
   * ```ts
   * for await (const agent of client.agents.list({ limit: 50 })) console.log(agent.name);
   * const page = await client.agents.list({ status: "active" });
   * if (page.hasNextPage()) await page.nextPage();
   * ```
   *
   * @throws {BadRequestError} a query value out of range (`limit` above 100, ...)
   */
  list(params: AgentListParams = {}, options?: RequestOptions): PagePromise<Agent> {
    const fetchPage = async (page: number | undefined): Promise<Page<Agent>> => {
      const body = (await this.#transport.json(
        {
          method: "GET",
          path: "/agents",
          query: { ...params, page },
          safety: "idempotent",
        },
        options,
      )) as ListEnvelope<Agent>;
      return new Page(body.data, body.pagination, fetchPage);
    };
    return new PagePromise(() => fetchPage(params.page));
  }

  /**
   * Updates the fields given and no others. `status: "inactive"` pauses the agent (messages to it are refused
   * with `ConflictError`), `status: "active"` resumes it; either keeps its data.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {BadRequestError} invalid fields, or `status: "error"`
   */
  async update(agentId: string, params: AgentUpdateParams, options?: RequestOptions): Promise<Agent> {
    const body = (await this.#transport.json(
      {
        method: "PATCH",
        path: `/agents/${idSegment("agentId", agentId)}`,
        body: params,
        safety: "idempotent",
      },
      options,
    )) as DataEnvelope<Agent>;
    return body.data;
  }

  /**
   * Deletes an agent with its conversation history, metrics and logs, permanently.
   *
   * Retried like any idempotent call: if a first attempt deleted the agent but its answer was lost, the retry
   * answers `NotFoundError`.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   * @throws {PermissionDeniedError} without the `agents:delete` scope
   */
  async delete(agentId: string, options?: RequestOptions): Promise<AgentDeleted> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: `/agents/${idSegment("agentId", agentId)}`, safety: "idempotent" },
      options,
    )) as DataEnvelope<AgentDeleted>;
    return body.data;
  }
}
