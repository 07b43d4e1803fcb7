import type { RequestOptions, Transport } from "../core.js";
import { type CursorPagePromise, collect, listCursorPages } from "../pagination.js";
import type {
  Member,
  MemberInviteParams,
  MemberListParams,
  MemberRemoved,
  MemberUpdateParams,
} from "../types.js";
import { idSegment } from "./path.js";

/**
 * The people of the account and their roles, which decide what their console sessions may do. Reading needs
 * `members:read`; inviting, changing and removing, `members:write`. Only an owner (or a full-access key) may make,
 * change or remove an owner, and the account always keeps one.
 */
export class Members {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Adds a person with a role. They sign in to the console by OIDC with this email.
   *
   * @throws {BadRequestError} an email that is not one, or an unknown role
   * @throws {ConflictError} `MEMBER_EXISTS`: the account has a member with this email
   * @throws {PermissionDeniedError} without `members:write`, or inviting an owner without an owner's rights
   */
  async invite(params: MemberInviteParams, options?: RequestOptions): Promise<Member> {
    const body = (await this.#transport.json(
      { method: "POST", path: "/members", body: { ...params } },
      options,
    )) as { data: Member };
    return body.data;
  }

  /**
   * Lists the members, newest first, a page at a time (default 20). Await the result for one page, or iterate it
   * for every member.
   */
  list(params: MemberListParams = {}, options?: RequestOptions): CursorPagePromise<Member> {
    return listCursorPages<Member>(this.#transport, "/members", params, options);
  }

  /** Every member that `list` would walk through, in one array. */
  listAll(params: MemberListParams = {}, options?: RequestOptions): Promise<Member[]> {
    return collect(this.list(params, options));
  }

  /**
   * One member.
   *
   * @throws {NotFoundError} `MEMBER_NOT_FOUND`
   */
  async get(memberId: string, options?: RequestOptions): Promise<Member> {
    const body = (await this.#transport.json(
      { method: "GET", path: `/members/${idSegment("memberId", memberId)}` },
      options,
    )) as { data: Member };
    return body.data;
  }

  /**
   * Changes a member's role, name or email.
   *
   * @throws {NotFoundError} `MEMBER_NOT_FOUND`
   * @throws {ConflictError} `LAST_OWNER`: the account's last owner cannot become anything else
   */
  async update(memberId: string, params: MemberUpdateParams, options?: RequestOptions): Promise<Member> {
    const body = (await this.#transport.json(
      { method: "PATCH", path: `/members/${idSegment("memberId", memberId)}`, body: { ...params } },
      options,
    )) as { data: Member };
    return body.data;
  }

  /**
   * Removes a member and ends their console sessions; the keys they created stay.
   *
   * @throws {NotFoundError} `MEMBER_NOT_FOUND`
   * @throws {ConflictError} `LAST_OWNER`: the account's last owner cannot be removed
   */
  async remove(memberId: string, options?: RequestOptions): Promise<MemberRemoved> {
    const body = (await this.#transport.json(
      { method: "DELETE", path: `/members/${idSegment("memberId", memberId)}` },
      options,
    )) as { data: MemberRemoved };
    return body.data;
  }
}
