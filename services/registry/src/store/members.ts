import { newId, type Role } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { MemberChange, MemberRecord, MembersQuery } from "./types.js";

/** The name of an account's first member when none is given. */
export const FIRST_OWNER_NAME = "Owner";

/** Emails are compared and kept in lowercase: one person, one member of an account. */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Ids for the owners given to accounts that existed before members, each dated by its account's creation. */
export function ownerIds<A extends { created_at: string | Date }>(accounts: readonly A[]): [A, string][] {
  return accounts.map((account) => [account, newId("member", new Date(account.created_at).getTime())]);
}

/**
 * Refuses a change that would leave the account without an owner: `owners` is how many it has now, counted in
 * the change's transaction.
 */
export function assertOwnerKept(member: MemberRecord, next: Role | null, owners: number): void {
  if (member.role !== "owner" || next === "owner" || owners > 1) return;
  throw new AppError(
    "LAST_OWNER",
    next === null
      ? `Member ${member.id} is the account's last owner and cannot be removed: make another member an owner first.`
      : `Member ${member.id} is the account's last owner and cannot become ${next}: make another member an owner first.`,
  );
}

/** The member after the change; the email normalised. */
export function applyMemberChange(member: MemberRecord, change: MemberChange): MemberRecord {
  return {
    ...member,
    ...(change.name !== undefined ? { name: change.name } : {}),
    ...(change.email !== undefined ? { email: normalEmail(change.email) } : {}),
    ...(change.role !== undefined ? { role: change.role } : {}),
  };
}

export function memberExists(email: string): AppError {
  return new AppError(
    "MEMBER_EXISTS",
    `The account already has a member with the email ${email}: change that member instead.`,
  );
}

/**
 * How a store reads a page of members: the condition on `id` (compared with the cursor), the direction to read
 * in, and whether the rows read must be reversed to be presented in the query's order.
 */
export function memberPage(query: MembersQuery): {
  cursor: string | null;
  comparison: ">" | "<" | null;
  direction: "ASC" | "DESC";
  reverse: boolean;
} {
  if (query.after !== undefined) {
    return { cursor: query.after, comparison: ">", direction: "ASC", reverse: query.order === "desc" };
  }
  if (query.before !== undefined) {
    return { cursor: query.before, comparison: "<", direction: "DESC", reverse: query.order === "asc" };
  }
  return {
    cursor: null,
    comparison: null,
    direction: query.order === "asc" ? "ASC" : "DESC",
    reverse: false,
  };
}

/** The page of `rows` read with one more than `limit`, in the query's order. */
export function memberPageOf<T>(rows: T[], query: MembersQuery, reverse: boolean) {
  const items = rows.slice(0, query.limit);
  if (reverse) items.reverse();
  return { items, hasMore: rows.length > query.limit };
}
