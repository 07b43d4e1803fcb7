import { effectiveLimits, LIMIT_NAMES, TIERS } from "@agentry/core";
import type { AccountRecord } from "@agentry/registry";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../command.js";
import { FailureError, UsageError } from "../errors.js";
import { formatTime, renderFields, renderTable } from "../format.js";
import { parseAccountName, parseLimitOverrides, parseTier } from "../values.js";
import { findAccount } from "./keys.js";
import { parseEmail, parseMemberName } from "./members.js";

/** An account as the CLI shows it: with the limits in force, not only its overrides. */
export function accountView(account: AccountRecord) {
  return {
    id: account.id,
    name: account.name,
    tier: account.tier,
    createdAt: account.createdAt,
    limitOverrides: account.limitOverrides,
    limits: effectiveLimits(account.tier, account.limitOverrides),
  };
}

function describeAccount(account: AccountRecord): string[] {
  const limits = effectiveLimits(account.tier, account.limitOverrides);
  const width = Math.max(...LIMIT_NAMES.map((name) => name.length));
  return [
    ...renderFields([
      ["id", account.id],
      ["name", account.name],
      ["tier", account.tier],
      ["created", formatTime(account.createdAt)],
    ]),
    "limits in force:",
    ...LIMIT_NAMES.map(
      (name) =>
        `  ${name.padEnd(width)}  ${limits[name]}${name in account.limitOverrides ? "  (override)" : ""}`,
    ),
  ];
}

export const accountsCreate: Command = {
  group: "accounts",
  name: "create",
  synopsis: `NAME [--tier ${TIERS.join("|")}] [--limit NAME=VALUE]... [--owner-email ADDRESS] [--owner-name NAME] [--json]`,
  summary: "Create an account",
  help: `Creates an account and prints it with the limits in force. The account gets its first member, an owner:
give their email to let them sign in to the console by OIDC (or set it later with 'agentry members').

Options:
  --tier TIER          ${TIERS.join(", ")} (default standard)
  --limit NAME=VALUE   Enterprise only, repeatable: override one limit with a positive integer.
                       Limits: ${LIMIT_NAMES.join(", ")}
  --owner-email ADDR   The owner's email (default: none yet)
  --owner-name NAME    The owner's name (default: Owner)
  --json               Print the account as JSON

Example:
  agentry accounts create acme --tier enterprise --limit maxAgents=500 --limit requestsPerMinute=1000`,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        tier: { type: "string" },
        limit: { type: "string", multiple: true },
        "owner-email": { type: "string" },
        "owner-name": { type: "string" },
        json: { type: "boolean" },
      },
      ["NAME"],
    );
    if (values.help) return context.printHelp();
    const name = parseAccountName(positionals[0] ?? "");
    const tier = parseTier(values.tier);
    const limitOverrides = parseLimitOverrides(values.limit, tier);
    const ownerName = parseMemberName(values["owner-name"], "--owner-name");
    const owner = {
      ...(values["owner-email"] !== undefined
        ? { email: parseEmail(values["owner-email"], "--owner-email") }
        : {}),
      ...(ownerName !== undefined ? { name: ownerName } : {}),
    };

    const store = await context.store();
    // The store refuses a taken name too; asking first gives the admin a clearer message.
    if (await store.getAccountByName(name))
      throw new FailureError(`an account named '${name}' already exists`);
    const account = await store.createAccount({ name, tier, limitOverrides, owner });

    if (values.json) return context.printJson(accountView(account));
    context.print(`Created account ${account.name}.`, ...describeAccount(account));
  },
};

export const accountsList: Command = {
  group: "accounts",
  name: "list",
  synopsis: "[--json]",
  summary: "List accounts with the limits in force",
  help: `Lists every account, oldest first, with its tier and the limits in force (its tier's defaults with its
overrides applied; an overridden value is marked *).

Options:
  --json   Print the accounts as a JSON array`,
  async run(args, context) {
    const { values } = parseCommandArgs(args, { json: { type: "boolean" } });
    if (values.help) return context.printHelp();

    const accounts = await (await context.store()).listAccounts();
    if (values.json) return context.printJson(accounts.map(accountView));
    if (accounts.length === 0)
      return context.print("No accounts. Create one with: agentry accounts create NAME");
    const rows = accounts.map((account) => {
      const limits = effectiveLimits(account.tier, account.limitOverrides);
      return [
        account.id,
        account.name,
        account.tier,
        formatTime(account.createdAt),
        ...LIMIT_NAMES.map((name) => `${limits[name]}${name in account.limitOverrides ? "*" : ""}`),
      ];
    });
    context.print(...renderTable(["ID", "NAME", "TIER", "CREATED", ...LIMIT_NAMES], rows));
  },
};

export const accountsUpdate: Command = {
  group: "accounts",
  name: "update",
  synopsis: `NAME [--tier ${TIERS.join("|")}] [--limit NAME=VALUE]... [--reset-limits] [--json]`,
  summary: "Change an account's plan",
  help: `Changes an account's tier and limit overrides. Running gateways apply the change within a second,
without a restart. Leaving the enterprise tier drops the account's overrides.

Options:
  --tier TIER          ${TIERS.join(", ")}
  --limit NAME=VALUE   Enterprise only, repeatable: set one override (other overrides are kept)
  --reset-limits       Drop every override first (back to the tier's defaults)
  --json               Print the account as JSON

Example:
  agentry accounts update acme --tier enterprise --limit maxAgents=1000`,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        tier: { type: "string" },
        limit: { type: "string", multiple: true },
        "reset-limits": { type: "boolean" },
        json: { type: "boolean" },
      },
      ["NAME"],
    );
    if (values.help) return context.printHelp();
    const reference = positionals[0] ?? "";
    const requestedTier = values.tier === undefined ? undefined : parseTier(values.tier);
    if (requestedTier === undefined && !values.limit?.length && !values["reset-limits"]) {
      throw new UsageError("nothing to change: give --tier, --limit or --reset-limits");
    }

    const store = await context.store();
    const account = await findAccount(store, reference);
    const tier = requestedTier ?? account.tier;
    const given = parseLimitOverrides(values.limit, tier);
    const kept = tier === "enterprise" && !values["reset-limits"] ? account.limitOverrides : {};
    const updated = await store.updateAccount(account.id, { tier, limitOverrides: { ...kept, ...given } });
    if (!updated) throw new FailureError(`no account named '${reference}'`);

    if (values.json) return context.printJson(accountView(updated));
    context.print(`Updated account ${updated.name}.`, ...describeAccount(updated));
  },
};
