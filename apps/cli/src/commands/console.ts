import { randomBytes } from "node:crypto";
import { sha256Hex } from "@agentry/core";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../command.js";
import { UsageError } from "../errors.js";
import { formatTime } from "../format.js";
import { findAccount } from "./keys.js";
import { findMember } from "./members.js";

/** How long a sign-in link works when --ttl is not given, and the longest it may. */
const DEFAULT_TTL_MINUTES = 10;
const MAX_TTL_MINUTES = 60;

function parseTtl(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TTL_MINUTES;
  const minutes = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_TTL_MINUTES) {
    throw new UsageError(`--ttl takes whole minutes from 1 to ${MAX_TTL_MINUTES}, got '${value}'`);
  }
  return minutes;
}

function parseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--base-url must be an http(s) URL, got '${value}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--base-url must be an http(s) URL, got '${value}'`);
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

export const consoleLink: Command = {
  group: "console",
  name: "link",
  synopsis: "--account NAME [--member EMAIL|ID] [--ttl MINUTES] [--base-url URL] [--json]",
  summary: "Print a one-time sign-in link to the web console",
  help: `Prints a link that signs its opener in to the web console as a member of the account (the account's first
owner unless --member names another), with the scopes of their role. It works once, within --ttl minutes; only its SHA-256 is stored. The session it opens lasts until sign-out, 30 minutes
without use or 12 hours at most (the gateway's CONSOLE_SESSION_IDLE_MS and CONSOLE_SESSION_MAX_MS).

Options:
  --account NAME    The account's name (or id)
  --member MEMBER   The member to sign in as: their email or id (default: the account's first owner)
  --ttl MINUTES     How long the link works, 1 to ${MAX_TTL_MINUTES} (default ${DEFAULT_TTL_MINUTES})
  --base-url URL    Where the service is reached (default PUBLIC_BASE_URL, else http://localhost:$PORT)
  --json            Print the link and its expiry as JSON

Example:
  agentry console link --account acme | tail -1`,
  async run(args, context) {
    const { values } = parseCommandArgs(args, {
      account: { type: "string" },
      member: { type: "string" },
      ttl: { type: "string" },
      "base-url": { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help) return context.printHelp();
    const reference = values.account?.trim();
    if (!reference) throw new UsageError("missing --account NAME");
    const minutes = parseTtl(values.ttl);
    const baseUrl = parseBaseUrl(values["base-url"] ?? context.publicBaseUrl());

    const store = await context.store();
    const account = await findAccount(store, reference);
    const token = randomBytes(32).toString("base64url");
    const expiresAt = new Date(context.now().getTime() + minutes * 60_000).toISOString();
    const member =
      values.member === undefined ? undefined : await findMember(store, account, values.member.trim());
    await store.createConsoleLink({
      accountId: account.id,
      sha256: sha256Hex(token),
      expiresAt,
      ...(member ? { memberId: member.id } : {}),
    });
    // The token rides in the fragment, which browsers never send to a server, so no access log keeps it.
    const url = `${baseUrl}/console/sign-in#token=${token}`;

    if (values.json) return context.printJson({ accountId: account.id, url, expiresAt });
    context.print(
      `Sign-in link for account ${account.name} (${account.id}), valid once until ${formatTime(expiresAt)},`,
      values["base-url"] === undefined
        ? `for the server at ${baseUrl} (PUBLIC_BASE_URL, else PORT; --base-url for another).`
        : `for the server at ${baseUrl}.`,
      "Open it in a browser; the link follows on the last line.",
      url,
    );
  },
};
