import type { RequestOptions, Transport } from "../core.js";
import type { ApiKey, ApiKeyCreated, ApiKeyCreateParams, ApiKeyRevoked } from "../types.js";
import { idSegment } from "./path.js";

/** The account's API keys. Every call needs a key with the `keys:manage` scope. */
export class ApiKeys {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Creates a key. Its secret (`key`) is in this answer only; store it now. Without `scopes` the new key gets
   * what the calling key holds, and never more: full access from a full-access key, its scopes otherwise.
   *
   * Sent with an `Idempotency-Key`, so a retry after a lost answer gets that answer, secret included, and
   * makes no second key.
   *
   * @throws {PermissionDeniedError} the calling key lacks `keys:manage` or a scope it tries to grant
   */
  async create(params: ApiKeyCreateParams = {}, options?: RequestOptions): Promise<ApiKeyCreated> {
    const { expiresAt, ...rest } = params;
    const body = (await this.#transport.json(
      {
        method: "POST",
        path: "/api-keys",
        body: {
          ...rest,
          ...(expiresAt !== undefined
            ? { expiresAt: expiresAt instanceof Date ? expiresAt.toISOString() : expiresAt }
            : {}),
        },
      },
      options,
    )) as { data: ApiKeyCreated };
    return body.data;
  }

  /** Lists the account's keys that still work (never their secrets). */
  async list(options?: RequestOptions): Promise<ApiKey[]> {
    const body = (await this.#transport.json({ method: "GET", path: "/api-keys" }, options)) as {
      data: ApiKey[];
    };
    return body.data;
  }

  /**
   * Revokes a key; requests with it are refused from then on.
   *
   * @throws {NotFoundError} `NOT_FOUND`: no such key in the account, or already revoked
   */
  async revoke(keyId: string, options?: RequestOptions): Promise<ApiKeyRevoked> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: `/api-keys/${idSegment("keyId", keyId)}` },
      options,
    )) as { data: ApiKeyRevoked };
    return body.data;
  }
}
