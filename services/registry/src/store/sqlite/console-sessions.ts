import { newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type Database from "better-sqlite3";
import { linkRedeemable, sessionUsable } from "../console-sessions.js";
import type {
  ConsoleLinkRecord,
  ConsoleSessionRecord,
  ConsoleSessionStore,
  NewConsoleSession,
  SignedIn,
} from "../types.js";
import { type AccountRow, type sqliteAccounts, toAccount } from "./accounts.js";
import { memberStatements, toMember } from "./members.js";
import { now, preparer } from "./shared.js";

interface ConsoleLinkRow {
  account_id: string;
  member_id: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

interface ConsoleSessionRow {
  id: string;
  account_id: string;
  member_id: string | null;
  created_at: string;
  expires_at: string;
  idle_timeout_ms: number;
  last_seen_at: string;
  ended_at: string | null;
}

function toConsoleLink(row: ConsoleLinkRow): ConsoleLinkRecord {
  return {
    accountId: row.account_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
  };
}

function toConsoleSession(row: ConsoleSessionRow): ConsoleSessionRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    memberId: row.member_id ?? "",
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    idleTimeoutMs: row.idle_timeout_ms,
    lastSeenAt: row.last_seen_at,
    endedAt: row.ended_at,
  };
}

/** Console sign-in links and the sessions they open, each for an account that still exists. */
export function sqliteConsoleSessions(
  db: Database.Database,
  { accountById }: Pick<ReturnType<typeof sqliteAccounts>, "accountById">,
): ConsoleSessionStore {
  const prepare = preparer(db);
  const sql = {
    insertConsoleLink: prepare<[string, string, string, string, string | null]>(
      "INSERT INTO console_links (sha256, account_id, created_at, expires_at, member_id) VALUES (?, ?, ?, ?, ?)",
    ),
    consoleLink: prepare<[string], ConsoleLinkRow>("SELECT * FROM console_links WHERE sha256 = ?"),
    useConsoleLink: prepare<[string, string]>("UPDATE console_links SET used_at = ? WHERE sha256 = ?"),
    insertConsoleSession: prepare<[string, string, string, string, string, number, string, string]>(
      `INSERT INTO console_sessions
         (sha256, id, account_id, created_at, expires_at, idle_timeout_ms, last_seen_at, member_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    consoleSession: prepare<[string], ConsoleSessionRow>("SELECT * FROM console_sessions WHERE sha256 = ?"),
    touchConsoleSession: prepare<[string, string]>(
      "UPDATE console_sessions SET last_seen_at = ? WHERE sha256 = ?",
    ),
    endConsoleSession: prepare<[string, string]>(
      "UPDATE console_sessions SET ended_at = coalesce(ended_at, ?) WHERE sha256 = ?",
    ),
    deleteExpiredConsoleLinks: prepare<[string, number]>(
      `DELETE FROM console_links WHERE sha256 IN (
         SELECT sha256 FROM console_links WHERE expires_at <= ? LIMIT ?)`,
    ),
    deleteExpiredConsoleSessions: prepare<[string, number]>(
      `DELETE FROM console_sessions WHERE sha256 IN (
         SELECT sha256 FROM console_sessions WHERE expires_at <= ? OR ended_at IS NOT NULL LIMIT ?)`,
    ),
  };

  const members = memberStatements(db);

  /** Opens a session for the member, in the caller's transaction. */
  const open = (
    account: AccountRow,
    memberId: string,
    input: NewConsoleSession,
    at: string,
  ): SignedIn | null => {
    const member = members.member.get(account.id, memberId);
    if (!member) return null;
    const session: ConsoleSessionRecord = {
      id: newId("session"),
      accountId: account.id,
      memberId,
      createdAt: at,
      expiresAt: new Date(input.expiresAt).toISOString(),
      idleTimeoutMs: input.idleTimeoutMs,
      lastSeenAt: at,
      endedAt: null,
    };
    sql.insertConsoleSession.run(
      input.sha256,
      session.id,
      session.accountId,
      session.createdAt,
      session.expiresAt,
      session.idleTimeoutMs,
      session.lastSeenAt,
      memberId,
    );
    return { session, account: toAccount(account), member: toMember(member) };
  };

  const redeemConsoleLink = db.transaction((linkSha256: string, input: NewConsoleSession) => {
    const row = sql.consoleLink.get(linkSha256);
    const at = now();
    if (!row || !linkRedeemable(toConsoleLink(row), Date.parse(at))) return null;
    const account = accountById.get(row.account_id);
    if (!account) return null;
    const memberId = input.memberId ?? row.member_id ?? members.firstOwner.get(account.id)?.id;
    if (memberId === undefined) return null;
    sql.useConsoleLink.run(at, linkSha256);
    return open(account, memberId, input, at);
  });

  const openConsoleSession = db.transaction(
    (accountId: string, memberId: string, input: NewConsoleSession) => {
      const account = accountById.get(accountId);
      return account ? open(account, memberId, input, now()) : null;
    },
  );

  const useConsoleSession = db.transaction((sha256: string) => {
    const row = sql.consoleSession.get(sha256);
    if (!row) return null;
    const account = accountById.get(row.account_id);
    if (!account) return null;
    const session = toConsoleSession(row);
    const member = row.member_id === null ? undefined : members.member.get(row.account_id, row.member_id);
    const at = now();
    if (member && sessionUsable(session, Date.parse(at))) {
      sql.touchConsoleSession.run(at, sha256);
      session.lastSeenAt = at;
    }
    return { session, account: toAccount(account), member: member ? toMember(member) : null };
  });

  return {
    async createConsoleLink(input) {
      if (!accountById.get(input.accountId)) {
        throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
      }
      if (input.memberId !== undefined && !members.member.get(input.accountId, input.memberId)) {
        throw new AppError("MEMBER_NOT_FOUND", `Member ${input.memberId} does not exist.`);
      }
      sql.insertConsoleLink.run(
        input.sha256,
        input.accountId,
        now(),
        new Date(input.expiresAt).toISOString(),
        input.memberId ?? null,
      );
    },
    async redeemConsoleLink(linkSha256, session) {
      return redeemConsoleLink.immediate(linkSha256, session);
    },
    async openConsoleSession(accountId, memberId, session) {
      return openConsoleSession.immediate(accountId, memberId, session);
    },
    async useConsoleSession(sha256) {
      return useConsoleSession.immediate(sha256);
    },
    async deleteExpiredConsoleSessions(limit) {
      const at = now();
      return (
        sql.deleteExpiredConsoleLinks.run(at, limit).changes +
        sql.deleteExpiredConsoleSessions.run(at, limit).changes
      );
    },
    async endConsoleSession(sha256) {
      return sql.endConsoleSession.run(now(), sha256).changes > 0;
    },
  };
}
