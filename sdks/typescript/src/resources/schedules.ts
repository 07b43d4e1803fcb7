import type { RequestOptions, Transport } from "../core.js";
import { type CursorPagePromise, collect, listCursorPages } from "../pagination.js";
import type {
  Schedule,
  ScheduleCreateParams,
  ScheduleDeleted,
  ScheduleListParams,
  ScheduleUpdateParams,
} from "../types.js";
import { idSegment } from "./path.js";

/**
 * An agent's schedules: at each time of a cron expression in a time zone the agent is sent a message in the
 * background, once across every process of the service. Every method needs the `agents:write` scope.
 */
export class Schedules {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Creates a schedule; the answer shows its next 5 fire times.
   *
   * ```ts
   * const schedule = await client.agents.schedules.create(agentId, {
   *   cron: "0 9 * * 1-5",
   *   timezone: "Europe/Berlin",
   *   text: "Post the morning summary.",
   * });
   * ```
   *
   * @throws {BadRequestError} a `cron` or `timezone` that is not valid (the error's `details` name the field)
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   */
  async create(agentId: string, params: ScheduleCreateParams, options?: RequestOptions): Promise<Schedule> {
    const body = (await this.#transport.json(
      { method: "POST", path: this.#path(agentId), body: { ...params } },
      options,
    )) as { data: Schedule };
    return body.data;
  }

  /**
   * Lists the agent's schedules, newest first, a page at a time. Await the result for one page, or iterate it for
   * every schedule.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND`
   */
  list(
    agentId: string,
    params: ScheduleListParams = {},
    options?: RequestOptions,
  ): CursorPagePromise<Schedule> {
    const path = this.#path(agentId);
    return listCursorPages<Schedule>(this.#transport, path, params, options);
  }

  /** Every schedule that `list` would walk through, in one array. */
  listAll(agentId: string, params: ScheduleListParams = {}, options?: RequestOptions): Promise<Schedule[]> {
    return collect(this.list(agentId, params, options));
  }

  /**
   * One schedule, with its next fire times and its last fire's outcome.
   *
   * @throws {NotFoundError} `SCHEDULE_NOT_FOUND`, `AGENT_NOT_FOUND`
   */
  async get(agentId: string, scheduleId: string, options?: RequestOptions): Promise<Schedule> {
    const body = (await this.#transport.json(
      { method: "GET", path: this.#path(agentId, scheduleId) },
      options,
    )) as { data: Schedule };
    return body.data;
  }

  /**
   * Changes the fields given; `enabled: false` stops its fires.
   *
   * @throws {BadRequestError} a `cron` or `timezone` that is not valid
   * @throws {NotFoundError} `SCHEDULE_NOT_FOUND`, `AGENT_NOT_FOUND`
   */
  async update(
    agentId: string,
    scheduleId: string,
    params: ScheduleUpdateParams,
    options?: RequestOptions,
  ): Promise<Schedule> {
    const body = (await this.#transport.json(
      { method: "PATCH", path: this.#path(agentId, scheduleId), body: { ...params } },
      options,
    )) as { data: Schedule };
    return body.data;
  }

  /**
   * Deletes a schedule: it fires no more.
   *
   * @throws {NotFoundError} `SCHEDULE_NOT_FOUND`, `AGENT_NOT_FOUND`
   */
  async delete(agentId: string, scheduleId: string, options?: RequestOptions): Promise<ScheduleDeleted> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: this.#path(agentId, scheduleId) },
      options,
    )) as { data: ScheduleDeleted };
    return body.data;
  }

  #path(agentId: string, scheduleId?: string): string {
    const base = `/agents/${idSegment("agentId", agentId)}/schedules`;
    return scheduleId === undefined ? base : `${base}/${idSegment("scheduleId", scheduleId)}`;
  }
}
