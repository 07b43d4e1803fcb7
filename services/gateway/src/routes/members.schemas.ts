import { ROLES } from "@agentry/core";
import { z } from "zod";
import type { ComponentRegistry } from "../openapi/convert.js";
import { inviteMemberBody, updateMemberBody } from "../validation/members.js";
import { cursorList, id, success, timestamp } from "./common.schemas.js";

/* The member records of docs/api/members.md, components of the document declared with their routes. */

export const Member = z
  .object({
    id: id("usr", "The member's id"),
    email: z
      .string()
      .nullable()
      .meta({
        description:
          "The member's email, in lowercase; their OIDC sign-in maps to it. `null` only for the owner the admin CLI made with the account, until one is set.",
        examples: ["ada@example.com"],
      }),
    name: z.string().meta({ description: "The member's name.", examples: ["Ada Lovelace"] }),
    role: z.enum(ROLES).meta({ description: 'What the member may do (docs/api/members.md, "Roles").' }),
    createdAt: timestamp("When the member was added."),
  })
  .meta({
    description: "A person of the account, who signs in to the console with the scopes of their role.",
  });

const MemberRemoved = z.object({ id: id("usr", "The removed member's id"), removed: z.literal(true) });

/** Adds the member schemas to the document. */
export function registerMemberSchemas(requests: ComponentRegistry, responses: ComponentRegistry): void {
  requests.add(inviteMemberBody, { id: "InviteMemberRequest" });
  requests.add(updateMemberBody, { id: "UpdateMemberRequest" });
  responses.add(Member, { id: "Member" });
  responses.add(success(Member), { id: "MemberResponse" });
  responses.add(cursorList(Member), { id: "MemberListResponse" });
  responses.add(success(MemberRemoved), { id: "MemberRemovedResponse" });
}
