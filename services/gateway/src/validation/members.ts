import { isEmail, MEMBER_BOUNDS, ROLES } from "@agentry/core";
import { z } from "zod";
import { cursorLimit, cursorOrder, cursors, oneCursor } from "./history.js";
import { trimmedText } from "./text.js";

/* The query and bodies of the member routes (docs/api/members.md). */

const email = z
  .string({ error: "must be a string" })
  // As sent, as the document's maxLength counts it; then trimmed.
  .max(
    MEMBER_BOUNDS.emailMaxLength,
    `must be an email address of at most ${MEMBER_BOUNDS.emailMaxLength} characters`,
  )
  .trim()
  .refine(isEmail, `must be an email address of at most ${MEMBER_BOUNDS.emailMaxLength} characters`)
  .meta({
    // What isEmail accepts once the value is trimmed, for the document's readers and generators.
    pattern: "^\\s*[^\\s@\\u0000]+@[^\\s@\\u0000]+\\.[^\\s@\\u0000]+\\s*$",
    maxLength: MEMBER_BOUNDS.emailMaxLength,
    description: "The member's email, compared in lowercase; unique within the account.",
    examples: ["ada@example.com"],
  });

const name = trimmedText(1, MEMBER_BOUNDS.nameMaxLength).meta({
  description: `The member's name, 1 to ${MEMBER_BOUNDS.nameMaxLength} characters once trimmed.`,
  examples: ["Ada Lovelace"],
});

const role = z.enum(ROLES, { error: `must be one of ${ROLES.join(", ")}` }).meta({
  description:
    '`owner`: every scope; `admin`: a developer\'s plus keys and members; `developer`: reads plus agents, messages, history, webhooks and plugins; `viewer`: reads only (docs/api/members.md, "Roles").',
});

export const inviteMemberBody = z.strictObject(
  {
    email,
    name: name
      .optional()
      .meta({ description: "The member's name; the part of the email before `@` when absent." }),
    role,
  },
  { error: "must be a JSON object" },
);

export const updateMemberBody = z
  .strictObject(
    { email: email.optional(), name: name.optional(), role: role.optional() },
    {
      error: "must be a JSON object",
    },
  )
  .refine((body) => Object.keys(body).length > 0, {
    message: "must change at least one of email, name and role",
    path: [],
  })
  .meta({ minProperties: 1 });

export const listMembersQuery = z
  .strictObject({
    limit: cursorLimit,
    ...cursors("member", "usr", "member"),
    order: cursorOrder,
  })
  .superRefine(oneCursor);
