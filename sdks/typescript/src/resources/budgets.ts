import type { RequestOptions, Transport } from "../core.js";
import type { Budget, BudgetCreateParams, BudgetDeleted, BudgetUpdateParams } from "../types.js";
import { idSegment } from "./path.js";

/**
 * The account's spend budgets: limits in tokens or US dollars per UTC day or month, for the account, an agent or a
 * key. A message a spent budget counts is refused with an `APIError` of status 402 and code `BUDGET_EXCEEDED`
 * before it reaches a model. Reads need `budgets:read`, changes `budgets:write`.
 */
export class Budgets {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Creates a budget; spend already recorded this period counts toward it.
   *
   * @throws {NotFoundError} `AGENT_NOT_FOUND` or `API_KEY_NOT_FOUND`: the agent or key is not the account's
   */
  async create(params: BudgetCreateParams, options?: RequestOptions): Promise<Budget> {
    const body = (await this.#transport.json(
      { method: "POST", path: "/budgets", body: params },
      options,
    )) as {
      data: Budget;
    };
    return body.data;
  }

  /** Every budget of the account, oldest first, each with its spend this period. */
  async list(options?: RequestOptions): Promise<Budget[]> {
    const body = (await this.#transport.json({ method: "GET", path: "/budgets" }, options)) as {
      data: Budget[];
    };
    return body.data;
  }

  /** @throws {NotFoundError} `BUDGET_NOT_FOUND` */
  async get(budgetId: string, options?: RequestOptions): Promise<Budget> {
    const body = (await this.#transport.json(
      { method: "GET", path: `/budgets/${idSegment("budgetId", budgetId)}` },
      options,
    )) as { data: Budget };
    return body.data;
  }

  /** Changes the limit (in the budget's unit) or the period. @throws {NotFoundError} `BUDGET_NOT_FOUND` */
  async update(budgetId: string, params: BudgetUpdateParams, options?: RequestOptions): Promise<Budget> {
    const body = (await this.#transport.json(
      { method: "PATCH", path: `/budgets/${idSegment("budgetId", budgetId)}`, body: params },
      options,
    )) as { data: Budget };
    return body.data;
  }

  /** @throws {NotFoundError} `BUDGET_NOT_FOUND` */
  async delete(budgetId: string, options?: RequestOptions): Promise<BudgetDeleted> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: `/budgets/${idSegment("budgetId", budgetId)}` },
      options,
    )) as { data: BudgetDeleted };
    return body.data;
  }
}
