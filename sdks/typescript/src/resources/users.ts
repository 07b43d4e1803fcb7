import type { RequestOptions, Transport } from "../core.js";
import type { UserErased } from "../types.js";
import { UserExport } from "../user-export.js";
import { idSegment } from "./path.js";

/** The data a user id holds across every agent of the account: its export, and its erasure. */
export class Users {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Exports every message of a user, in every agent of the account (scope `history:read`), as an async iterable
   * read from the response while it arrives: the whole export is never held in memory. The request is sent when
   * the loop starts. A user without messages gives an empty export.
   *
   * ```ts
   * for await (const message of client.users.export("user-42")) {
   *   console.log(message.agentId, message.role, message.text);
   * }
   * ```
   *
   * An export that breaks after it started throws `APIConnectionError` and is not retried; see `UserExport`.
   *
   * @throws {BadRequestError} a user id no message can have (over 256 characters)
   * @throws {PermissionDeniedError} without the `history:read` scope
   */
  export(userId: string, options: RequestOptions = {}): UserExport {
    const path = `/users/${idSegment("userId", userId)}/export`;
    return new UserExport(
      (signal) =>
        this.#transport.stream({ method: "GET", path }, { ...options, signal }, "application/x-ndjson"),
      options.signal,
      options.timeout ?? this.#transport.timeout,
    );
  }

  /**
   * Erases a user (scope `history:delete`): their conversations and messages in every agent of the account, and
   * their id from the usage figures, whose counts stay, unattributed. Erasing again, or a user without data,
   * answers the same with `messagesDeleted: 0`.
   *
   * @throws {PermissionDeniedError} without the `history:delete` scope
   */
  async erase(userId: string, options?: RequestOptions): Promise<UserErased> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: `/users/${idSegment("userId", userId)}` },
      options,
    )) as { data: UserErased };
    return body.data;
  }
}
