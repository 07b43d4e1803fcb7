import { isEmail, isId, MEMBER_BOUNDS, ROLES, type Role } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { AccountRecord, MemberRecord, RegistryStore } from "@agentry/registry";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../command.js";
import { FailureError, UsageError } from "../errors.js";
import { formatTime, renderTable } from "../format.js";
import { findAccount } from "./keys.js";

const ROLE_HELP = `owner (every scope), admin (a developer's plus keys and members), developer (reads plus
                    agents, messages, history, webhooks, plugins), viewer (reads only)`;

export function parseRole(value: string | undefined): Role {
  const role = value?.trim();
  if (!role) throw new UsageError(`missing --role ${ROLES.join("|")}`);
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new UsageError(`--role must be one of ${ROLES.join(", ")}, got '${role}'`);
  }
  return role as Role;
}

export function parseEmail(value: string | undefined, option = "--email"): string {
  const email = value?.trim();
  if (!email) throw new UsageError(`missing ${option} ADDRESS`);
  if (!isEmail(email)) throw new UsageError(`${option} must be an email address, got '${email}'`);
  return email;
}

export function parseMemberName(value: string | undefined, option = "--name"): string | undefined {
  if (value === undefined) return undefined;
  const name = value.trim();
  if (name === "" || [...name].length > MEMBER_BOUNDS.nameMaxLength) {
    throw new UsageError(`${option} must be 1 to ${MEMBER_BOUNDS.nameMaxLength} characters`);
  }
  return name;
}

function requireAccount(value: string | undefined): string {
  if (value === undefined || value.trim() === "") throw new UsageError("missing --account NAME");
  return value.trim();
}

/** A member of the account by id or by email. */
export async function findMember(
  store: RegistryStore,
  account: AccountRecord,
  reference: string,
): Promise<MemberRecord> {
  const member = isId("member", reference)
    ? await store.getMember(account.id, reference)
    : ((await store.findMembersByEmail(reference)).find((m) => m.accountId === account.id) ?? null);
  if (!member) throw new FailureError(`account ${account.name} has no member '${reference}'`);
  return member;
}

/** The store's refusals (an email taken, the last owner) as the CLI's failures, in the store's words. */
async function refused<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && ["MEMBER_EXISTS", "LAST_OWNER"].includes(error.code)) {
      throw new FailureError(error.message);
    }
    throw error;
  }
}

function memberRow(member: MemberRecord): string[] {
  return [
    member.id,
    member.email ?? "-",
    member.role,
    member.name.replace(/\s+/g, "_"),
    formatTime(member.createdAt),
  ];
}

export const membersList: Command = {
  group: "members",
  name: "list",
  synopsis: "--account NAME [--json]",
  summary: "List an account's members and their roles",
  help: `Lists the people of an account, oldest first, with their roles.

Options:
  --account NAME   The account's name (or id)
  --json           Print the members as a JSON array`,
  async run(args, context) {
    const { values } = parseCommandArgs(args, { account: { type: "string" }, json: { type: "boolean" } });
    if (values.help) return context.printHelp();
    const store = await context.store();
    const account = await findAccount(store, requireAccount(values.account));
    const members: MemberRecord[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.listMembers(account.id, {
        limit: 100,
        order: "asc",
        ...(after ? { after } : {}),
      });
      members.push(...page.items);
      if (!page.hasMore) break;
      after = page.items.at(-1)?.id;
    }
    if (values.json) return context.printJson(members);
    context.print(...renderTable(["ID", "EMAIL", "ROLE", "NAME", "ADDED"], members.map(memberRow)));
  },
};

export const membersInvite: Command = {
  group: "members",
  name: "invite",
  synopsis: `--account NAME --email ADDRESS --role ${ROLES.join("|")} [--name NAME] [--json]`,
  summary: "Add a member to an account",
  help: `Adds a person to an account with a role. They sign in to the console by OIDC with this email, or with
a link from 'agentry console link --member ADDRESS'.

Options:
  --account NAME      The account's name (or id)
  --email ADDRESS     Their email; unique within the account
  --role ROLE         ${ROLE_HELP}
  --name NAME         Their name (default: the part of the email before @)
  --json              Print the member as JSON

Example:
  agentry members invite --account acme --email ada@example.com --role developer`,
  async run(args, context) {
    const { values } = parseCommandArgs(args, {
      account: { type: "string" },
      email: { type: "string" },
      role: { type: "string" },
      name: { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help) return context.printHelp();
    const reference = requireAccount(values.account);
    const email = parseEmail(values.email);
    const role = parseRole(values.role);
    const name = parseMemberName(values.name) ?? email.slice(0, email.indexOf("@"));
    const store = await context.store();
    const account = await findAccount(store, reference);
    const member = await refused(() => store.createMember({ accountId: account.id, email, name, role }));
    if (values.json) return context.printJson(member);
    context.print(`Added ${member.email} to account ${account.name} as ${member.role} (${member.id}).`);
  },
};

export const membersSetRole: Command = {
  group: "members",
  name: "set-role",
  synopsis: `MEMBER --account NAME --role ${ROLES.join("|")} [--json]`,
  summary: "Change a member's role",
  help: `Changes a member's role (MEMBER is their id or email). It takes effect on their console sessions within a
second. The account's last owner cannot become anything else.

Options:
  --account NAME   The account's name (or id)
  --role ROLE      ${ROLE_HELP}
  --json           Print the member as JSON`,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(
      args,
      { account: { type: "string" }, role: { type: "string" }, json: { type: "boolean" } },
      ["MEMBER"],
    );
    if (values.help) return context.printHelp();
    const reference = requireAccount(values.account);
    const role = parseRole(values.role);
    const store = await context.store();
    const account = await findAccount(store, reference);
    const member = await findMember(store, account, (positionals[0] ?? "").trim());
    const changed = await refused(() => store.updateMember(account.id, member.id, { role }));
    if (!changed) throw new FailureError(`account ${account.name} has no member '${member.id}'`);
    if (values.json) return context.printJson(changed);
    context.print(`${changed.email ?? changed.id} is now ${changed.role} of account ${account.name}.`);
  },
};

export const membersRemove: Command = {
  group: "members",
  name: "remove",
  synopsis: "MEMBER --account NAME",
  summary: "Remove a member from an account",
  help: `Removes a member (MEMBER is their id or email) and ends their console sessions. The keys they created
stay. The account's last owner cannot be removed.

Options:
  --account NAME   The account's name (or id)`,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(args, { account: { type: "string" } }, ["MEMBER"]);
    if (values.help) return context.printHelp();
    const reference = requireAccount(values.account);
    const store = await context.store();
    const account = await findAccount(store, reference);
    const member = await findMember(store, account, (positionals[0] ?? "").trim());
    await refused(() => store.deleteMember(account.id, member.id));
    context.print(`Removed ${member.email ?? member.id} from account ${account.name}.`);
  },
};
