import { FULL_ACCESS, type Scope, type ScopeGrant } from "./api-keys.js";

/** The roles of an account's members, from the most to the least trusted. */
export const ROLES = ["owner", "admin", "developer", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

const VIEWER: Scope[] = ["agents:read", "history:read", "usage:read", "members:read"];
const DEVELOPER: Scope[] = [
  ...VIEWER,
  "agents:write",
  "agents:delete",
  "messages:send",
  "history:delete",
  "webhooks:manage",
  "plugins:manage",
];
const ADMIN: Scope[] = [...DEVELOPER, "keys:manage", "members:write", "audit:read"];

/**
 * What each role may do, as scopes: the one map every check of a member's rights reads (docs/api/members.md,
 * "Roles"). A viewer reads; a developer also works on agents, messages, history, webhooks and plugins; an admin
 * also manages keys and members and reads the audit log; an owner holds every scope, including those later versions add (budgets, the
 * account itself).
 */
export const ROLE_SCOPES: Readonly<Record<Role, ScopeGrant>> = {
  owner: FULL_ACCESS,
  admin: ADMIN,
  developer: DEVELOPER,
  viewer: VIEWER,
};

/** Bounds of a member's fields. */
export const MEMBER_BOUNDS = { nameMaxLength: 100, emailMaxLength: 254 } as const;

// One @, something on each side, a dot in the domain, no spaces: the shape of an address, not its deliverability.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Whether a text has the shape of an email address, within MEMBER_BOUNDS. */
export function isEmail(value: string): boolean {
  return value.length <= MEMBER_BOUNDS.emailMaxLength && EMAIL.test(value);
}
