import type { RequestOptions, Transport } from "../core.js";
import { type CursorPagePromise, collect, listCursorPages } from "../pagination.js";
import type {
  WebhookDelivery,
  WebhookDeliveryListParams,
  WebhookEndpoint,
  WebhookEndpointCreateParams,
  WebhookEndpointDeleted,
  WebhookEndpointUpdateParams,
  WebhookEndpointWithSecret,
} from "../types.js";
import { idSegment } from "./path.js";

const endpointPath = (webhookId: string) => `/webhooks/${idSegment("webhookId", webhookId)}`;

/** An endpoint's delivery log: one entry per attempt, retries and redeliveries included. */
export class WebhookDeliveries {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Lists the endpoint's delivery attempts, newest first, a page at a time (default 20). Await the result for
   * one page, or iterate it for every attempt:
   *
   * ```ts
   * for await (const delivery of client.webhookEndpoints.deliveries.list(webhookId)) {
   *   if (delivery.status === "failed") console.log(delivery.eventType, delivery.error);
   * }
   * ```
   *
   * @throws {NotFoundError} `WEBHOOK_NOT_FOUND`
   * @throws {BadRequestError} a query value out of range, or a cursor that is not one of its deliveries
   */
  list(
    webhookId: string,
    params: WebhookDeliveryListParams = {},
    options?: RequestOptions,
  ): CursorPagePromise<WebhookDelivery> {
    const path = `${endpointPath(webhookId)}/deliveries`;
    return listCursorPages<WebhookDelivery>(this.#transport, path, params, options);
  }

  /** Every delivery attempt that `list` would walk through, fetched page by page and returned in one array. */
  listAll(
    webhookId: string,
    params: WebhookDeliveryListParams = {},
    options?: RequestOptions,
  ): Promise<WebhookDelivery[]> {
    return collect(this.list(webhookId, params, options));
  }

  /**
   * Delivers an attempt's event again, now: a new attempt (a new `dlv_` id) of the same event, with the same
   * `webhook-id`, whatever became of the earlier attempts.
   *
   * Sent with an `Idempotency-Key`: a retry after a lost answer gets that answer and makes no second attempt.
   *
   * @throws {NotFoundError} `WEBHOOK_NOT_FOUND`, `DELIVERY_NOT_FOUND`
   * @throws {BadRequestError} the endpoint is disabled (`details` names `enabled`)
   */
  async redeliver(webhookId: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    const body = (await this.#transport.json(
      {
        method: "POST",
        path: `${endpointPath(webhookId)}/deliveries/${idSegment("deliveryId", deliveryId)}/redeliver`,
      },
      options,
    )) as { data: WebhookDelivery };
    return body.data;
  }
}

/**
 * The account's webhook endpoints, where the service POSTs its events, signed the Standard Webhooks way (verify
 * them with `client.webhooks`). Every call needs the `webhooks:manage` scope.
 */
export class WebhookEndpoints {
  /** Each endpoint's log of delivery attempts. */
  readonly deliveries: WebhookDeliveries;
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
    this.deliveries = new WebhookDeliveries(transport);
  }

  /**
   * Creates an endpoint. Its signing `secret` is in this answer only; store it now.
   *
   * ```ts
   * const endpoint = await client.webhookEndpoints.create({
   *   url: "https://example.com/agentry/webhooks",
   *   events: ["agent.created", "agent.deleted"],
   * });
   * await saveSecret(endpoint.id, endpoint.secret);
   * ```
   *
   * Sent with an `Idempotency-Key`, so a retry after a lost answer gets that answer, secret included, and
   * makes no second endpoint.
   *
   * @throws {BadRequestError} an invalid field: a URL that is not `https` or resolves to a private address, an
   *   unknown event type, ...
   * @throws {PermissionDeniedError} `INSUFFICIENT_QUOTA`: the account holds its maximum of 20 endpoints
   */
  async create(
    params: WebhookEndpointCreateParams,
    options?: RequestOptions,
  ): Promise<WebhookEndpointWithSecret> {
    const body = (await this.#transport.json(
      { method: "POST", path: "/webhooks", body: params },
      options,
    )) as { data: WebhookEndpointWithSecret };
    return body.data;
  }

  /** Lists the account's endpoints (never their secrets). */
  async list(options?: RequestOptions): Promise<WebhookEndpoint[]> {
    const body = (await this.#transport.json({ method: "GET", path: "/webhooks" }, options)) as {
      data: WebhookEndpoint[];
    };
    return body.data;
  }

  /**
   * Reads an endpoint (never its secret).
   *
   * @throws {NotFoundError} `WEBHOOK_NOT_FOUND`
   */
  async get(webhookId: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    const body = (await this.#transport.json({ method: "GET", path: endpointPath(webhookId) }, options)) as {
      data: WebhookEndpoint;
    };
    return body.data;
  }

  /**
   * Updates the fields given and no others. `enabled: false` stops deliveries (pending attempts fail);
   * `enabled: true` resumes them and clears `disabledReason`.
   *
   * @throws {NotFoundError} `WEBHOOK_NOT_FOUND`
   * @throws {BadRequestError} an invalid field
   */
  async update(
    webhookId: string,
    params: WebhookEndpointUpdateParams,
    options?: RequestOptions,
  ): Promise<WebhookEndpoint> {
    const body = (await this.#transport.json(
      { method: "PATCH", path: endpointPath(webhookId), body: params },
      options,
    )) as { data: WebhookEndpoint };
    return body.data;
  }

  /**
   * Deletes an endpoint and its delivery log; nothing more is sent to it.
   *
   * @throws {NotFoundError} `WEBHOOK_NOT_FOUND`
   */
  async delete(webhookId: string, options?: RequestOptions): Promise<WebhookEndpointDeleted> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: endpointPath(webhookId) },
      options,
    )) as { data: WebhookEndpointDeleted };
    return body.data;
  }

  /**
   * Replaces the endpoint's signing secret. The new one is in this answer only; the old one keeps signing
   * deliveries, beside it, for 24 hours, so receivers can switch without losing any.
   *
   * Sent with an `Idempotency-Key`: a retry after a lost answer gets the secret that answer carried rather than
   * rotating again.
   *
   * @throws {NotFoundError} `WEBHOOK_NOT_FOUND`
   */
  async rotateSecret(webhookId: string, options?: RequestOptions): Promise<WebhookEndpointWithSecret> {
    const body = (await this.#transport.json(
      { method: "POST", path: `${endpointPath(webhookId)}/rotate-secret` },
      options,
    )) as { data: WebhookEndpointWithSecret };
    return body.data;
  }

  /**
   * Sends a `webhook.test` event to the endpoint, whatever it subscribes to, and answers its first delivery
   * attempt (`pending`); follow it in `deliveries.list`.
   *
   * Sent with an `Idempotency-Key`: a retry after a lost answer gets that answer and sends no second event.
   *
   * @throws {NotFoundError} `WEBHOOK_NOT_FOUND`
   * @throws {BadRequestError} the endpoint is disabled (`details` names `enabled`)
   */
  async sendTestEvent(webhookId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    const body = (await this.#transport.json(
      { method: "POST", path: `${endpointPath(webhookId)}/test` },
      options,
    )) as { data: WebhookDelivery };
    return body.data;
  }
}
