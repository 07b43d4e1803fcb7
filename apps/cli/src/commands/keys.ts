import { generateApiKey, isId, SCOPES } from "@agentry/core";
import type { AccountRecord, ApiKeyRecord, RegistryStore } from "@agentry/registry";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../command.js";
import { FailureError, UsageError } from "../errors.js";
import { formatTime, renderFields, renderTable } from "../format.js";
import { parseExpiry, parseKeyName, parseScopes } from "../values.js";

/** `--account` takes the account's name or its id. */
export async function findAccount(store: RegistryStore, reference: string): Promise<AccountRecord> {
  const byId = isId("account", reference);
  const account =
    (await store.getAccountByName(reference)) ?? (byId ? await store.getAccount(reference) : null);
  if (!account) throw new FailureError(`no account ${byId ? "with id" : "named"} '${reference}'`);
  return account;
}

/** What marks a full-access key in the table, where a cell holds no spaces (scripts split rows on them). */
const FULL_ACCESS_MARK = "+";
const FULL_ACCESS_NOTE = "full access: also every scope added later";

function requireAccountOption(value: string | undefined): string {
  if (value === undefined || value.trim() === "") throw new UsageError("missing --account NAME");
  return value.trim();
}

export const keysCreate: Command = {
  group: "keys",
  name: "create",
  synopsis: "--account NAME [--name LABEL] [--scopes a,b] [--expires ISO8601] [--json]",
  summary: "Create an API key and print it once",
  help: `Creates an API key for an account. The key is printed once, alone on the last line of the output, and
cannot be shown again: only its SHA-256 is stored.

Options:
  --account NAME      The account's name (or id)
  --name LABEL        A label to recognise the key by
  --scopes a,b        Comma-separated scopes: ${SCOPES.join(", ")}. Without it the key has full access:
                      every scope, including scopes added in later versions
  --expires ISO8601   When the key stops working: a date (midnight UTC) or a date-time with offset
  --json              Print the key record and the key as JSON

Example:
  agentry keys create --account acme --name ci --scopes agents:read,messages:send | tail -1`,
  async run(args, context) {
    const { values } = parseCommandArgs(args, {
      account: { type: "string" },
      name: { type: "string" },
      scopes: { type: "string" },
      expires: { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help) return context.printHelp();
    const reference = requireAccountOption(values.account);
    const name = parseKeyName(values.name);
    const scopes = parseScopes(values.scopes);
    const expiresAt = parseExpiry(values.expires, context.now());

    const store = await context.store();
    const account = await findAccount(store, reference);
    const { secret, sha256, prefix } = generateApiKey();
    const key = await store.createApiKey({ accountId: account.id, name, scopes, expiresAt, sha256, prefix });

    if (values.json) return context.printJson({ ...key, key: secret });
    context.print(
      `Created API key ${key.id} for account ${account.name} (${account.id}).`,
      ...renderFields([
        ["name", key.name || "-"],
        ["prefix", key.prefix],
        ["scopes", key.scopes.join(", ") + (key.fullAccess ? ` (${FULL_ACCESS_NOTE})` : "")],
        ["expires", key.expiresAt === null ? "never" : formatTime(key.expiresAt)],
      ]),
      "The key follows on the last line. It is shown only this once; store it now.",
      secret,
    );
  },
};

function keyRow(key: ApiKeyRecord): string[] {
  return [
    key.id,
    key.name || "-",
    key.prefix,
    key.scopes.join(",") + (key.fullAccess ? FULL_ACCESS_MARK : ""),
    formatTime(key.createdAt),
    formatTime(key.lastUsedAt),
    formatTime(key.expiresAt),
    formatTime(key.revokedAt),
  ];
}

export const keysList: Command = {
  group: "keys",
  name: "list",
  synopsis: "--account NAME [--json]",
  summary: "List an account's API keys",
  help: `Lists an account's API keys, oldest first, revoked ones included. Keys themselves are never shown, only
the prefix they start with.

Options:
  --account NAME   The account's name (or id)
  --json           Print the keys as a JSON array`,
  async run(args, context) {
    const { values } = parseCommandArgs(args, {
      account: { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help) return context.printHelp();
    const reference = requireAccountOption(values.account);

    const store = await context.store();
    const account = await findAccount(store, reference);
    const keys = await store.listApiKeys(account.id);
    if (values.json) return context.printJson(keys);
    if (keys.length === 0) {
      return context.print(
        `Account ${account.name} has no API keys. Create one with: agentry keys create --account ${account.name}`,
      );
    }
    context.print(
      ...renderTable(
        ["ID", "NAME", "PREFIX", "SCOPES", "CREATED", "LAST USED", "EXPIRES", "REVOKED"],
        keys.map(keyRow),
      ),
      ...(keys.some((key) => key.fullAccess) ? [`${FULL_ACCESS_MARK} ${FULL_ACCESS_NOTE}`] : []),
    );
  },
};

export const keysRevoke: Command = {
  group: "keys",
  name: "revoke",
  synopsis: "KEY_ID [--json]",
  summary: "Revoke an API key",
  help: `Revokes an API key: the service refuses it from then on (a gateway trusts a verified key for up to
AUTH_CACHE_TTL_MS, 1 s by default). Revoking a revoked key keeps its first revocation time.

Options:
  --json   Print the revoked key record as JSON

Example:
  agentry keys revoke key_01JD0S3V6Q8Y1J7K2M4N5P6R7S`,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(args, { json: { type: "boolean" } }, ["KEY_ID"]);
    if (values.help) return context.printHelp();
    const id = (positionals[0] ?? "").trim();

    const store = await context.store();
    const before = context.now().toISOString();
    const key = await store.revokeApiKey(id);
    if (!key) throw new FailureError(`no API key with id '${id}'`);

    if (values.json) return context.printJson(key);
    const revokedAt = key.revokedAt ?? before;
    context.print(
      revokedAt < before
        ? `API key ${key.id} (${key.prefix}) was already revoked at ${formatTime(revokedAt)}.`
        : `Revoked API key ${key.id} (${key.prefix}).`,
    );
  },
};
