import { isId, type Role } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { type Member, Role as RoleEnum } from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { roleOf } from "../http/console-session.js";
import { CURSOR_NOTE } from "../openapi/operations.js";
import { inviteMemberBody, listMembersQuery, updateMemberBody } from "../validation/members.js";
import { defineRoute, type Route } from "./define.js";

const ROLE_TO_PROTO: Record<Role, RoleEnum> = {
  owner: RoleEnum.OWNER,
  admin: RoleEnum.ADMIN,
  developer: RoleEnum.DEVELOPER,
  viewer: RoleEnum.VIEWER,
};

/** A member as every route presents it (docs/api/members.md, "The member object"). */
export function presentMember(member: Member) {
  return {
    id: member.id,
    email: member.email || null,
    name: member.name,
    role: roleOf(member),
    createdAt: (member.createTime ? timestampDate(member.createTime) : new Date(0)).toISOString(),
  };
}

/** The member id of a path, refused as missing when it cannot be one. */
function memberId(id: string): string {
  if (!isId("member", id))
    throw new AppError("MEMBER_NOT_FOUND", `Member ${JSON.stringify(id)} does not exist.`);
  return id;
}

const MEMBER_ID = {
  memberId: {
    description:
      "The member's id (`usr_…`). An id of another account's member, or not of that form, is answered `404 MEMBER_NOT_FOUND`.",
    example: "usr_01JCZ3S8Q5M2T7V9X0B4D6F8H1",
  },
};

/** The people of the account and their roles (docs/api/members.md). */
export const memberRoutes: Route[] = [
  defineRoute({
    method: "POST",
    path: "/v1/members",
    scope: "members:write",
    limit: "createPerMinute",
    operationId: "inviteMember",
    sdk: { resource: ["members"], method: "invite" },
    tag: "Members",
    summary: "Invite a member",
    description:
      "Adds a person to the account with a role. They sign in to the console by OIDC with this email (or with a sign-in link made for them by `agentry console link --member`), and act with the scopes of their role. Only an owner may add an owner.",
    body: { schema: inviteMemberBody, component: "InviteMemberRequest" },
    success: { status: 201, schema: "MemberResponse", description: "The member added." },
    errors: ["INVALID_REQUEST", "MEMBER_EXISTS", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const body = await input.body();
      requireOwnerFor(principal.fullAccess, body.role);
      const { member } = await gateway.accounts.createMember(
        {
          accountId: principal.accountId,
          email: body.email,
          name: body.name ?? body.email.slice(0, body.email.indexOf("@")),
          role: ROLE_TO_PROTO[body.role],
        },
        rpc,
      );
      ctx.status = 201;
      ctx.body = { success: true, data: presentMember(member!) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/members",
    scope: "members:read",
    limit: "listPerMinute",
    operationId: "listMembers",
    tag: "Members",
    summary: "List members",
    description: `The account's members, newest first unless \`order=asc\`. ${CURSOR_NOTE}`,
    query: listMembersQuery,
    pagination: "cursor",
    success: { status: 200, schema: "MemberListResponse", description: "One page of members." },
    errors: ["INVALID_REQUEST"],
    async handler(input) {
      const { ctx, gateway, principal, rpc } = input;
      const query = input.query();
      const { members, hasMore } = await gateway.accounts.listMembers(
        {
          accountId: principal.accountId,
          limit: query.limit,
          before: query.before ?? "",
          after: query.after ?? "",
          ascending: query.order === "asc",
        },
        rpc,
      );
      ctx.body = {
        success: true,
        data: members.map(presentMember),
        pagination: { limit: query.limit, hasMore },
      };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/v1/members/:memberId",
    params: MEMBER_ID,
    scope: "members:read",
    limit: "getPerMinute",
    operationId: "getMember",
    tag: "Members",
    summary: "Get a member",
    description: "One member of the account.",
    success: { status: 200, schema: "MemberResponse", description: "The member." },
    errors: ["MEMBER_NOT_FOUND"],
    async handler({ ctx, gateway, principal, rpc, params }) {
      const { member } = await gateway.accounts.getMember(
        { accountId: principal.accountId, id: memberId(params.memberId) },
        rpc,
      );
      ctx.body = { success: true, data: presentMember(member!) };
    },
  }),
  defineRoute({
    method: "PATCH",
    path: "/v1/members/:memberId",
    params: MEMBER_ID,
    scope: "members:write",
    limit: "updatePerMinute",
    operationId: "updateMember",
    tag: "Members",
    summary: "Change a member",
    description:
      "Changes a member's role, name or email; only the fields sent change. A new role takes effect on the member's console sessions within a second. Only an owner may make or unmake an owner, and the account's last owner cannot become anything else (`409 LAST_OWNER`).",
    body: { schema: updateMemberBody, component: "UpdateMemberRequest" },
    success: { status: 200, schema: "MemberResponse", description: "The member as changed." },
    errors: [
      "INVALID_REQUEST",
      "MEMBER_NOT_FOUND",
      "MEMBER_EXISTS",
      "LAST_OWNER",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    async handler(input) {
      const { ctx, gateway, principal, rpc, params } = input;
      const id = memberId(params.memberId);
      const body = await input.body();
      if (body.role !== undefined && !principal.fullAccess) {
        // Changing an owner's role is an owner's act too, whatever the new role.
        const { member } = await gateway.accounts.getMember({ accountId: principal.accountId, id }, rpc);
        requireOwnerFor(false, roleOf(member!));
        requireOwnerFor(false, body.role);
      }
      const { member } = await gateway.accounts.updateMember(
        {
          accountId: principal.accountId,
          id,
          ...(body.email !== undefined ? { email: body.email } : {}),
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.role !== undefined ? { role: ROLE_TO_PROTO[body.role] } : {}),
        },
        rpc,
      );
      ctx.body = { success: true, data: presentMember(member!) };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/v1/members/:memberId",
    params: MEMBER_ID,
    scope: "members:write",
    limit: "deletePerMinute",
    operationId: "removeMember",
    sdk: { resource: ["members"], method: "remove" },
    tag: "Members",
    summary: "Remove a member",
    description:
      "Removes a member from the account and ends their console sessions at once. The keys they created stay, and still name them in `createdBy`. Only an owner may remove an owner, and the account's last owner cannot be removed (`409 LAST_OWNER`).",
    success: { status: 200, schema: "MemberRemovedResponse", description: "The member was removed." },
    errors: ["MEMBER_NOT_FOUND", "LAST_OWNER"],
    async handler({ ctx, gateway, principal, rpc, params }) {
      const id = memberId(params.memberId);
      if (!principal.fullAccess) {
        const { member } = await gateway.accounts.getMember({ accountId: principal.accountId, id }, rpc);
        requireOwnerFor(false, roleOf(member!));
      }
      await gateway.accounts.deleteMember({ accountId: principal.accountId, id }, rpc);
      ctx.body = { success: true, data: { id, removed: true } };
    },
  }),
];

/**
 * Owners are made, changed and removed only by a caller with an owner's rights (every scope: an owner's session
 * or a full-access key): an admin cannot raise anyone, themselves included, above their own role.
 */
function requireOwnerFor(fullAccess: boolean, role: Role): void {
  if (role === "owner" && !fullAccess) {
    throw new AppError(
      "FORBIDDEN",
      "Only an owner (or a full-access key) may make, change or remove an owner of the account.",
    );
  }
}
