import { newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type Database from "better-sqlite3";
import { linkRedeemable, sessionUsable } from "../console-sessions.js";
import type {
  ConsoleLinkRecord,
  ConsoleSessionRecord,
  ConsoleSessionStore,
  NewConsoleSession,
} from "../types.js";
import { type sqliteAccounts, toAccount } from "./accounts.js";
import { now, preparer } from "./shared.js";

interface ConsoleLinkRow {
  account_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

interface ConsoleSessionRow {
  id: string;
  account_id: string;
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
    insertConsoleLink: prepare<[string, string, string, string]>(
      "INSERT INTO console_links (sha256, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
    ),
    consoleLink: prepare<[string], ConsoleLinkRow>("SELECT * FROM console_links WHERE sha256 = ?"),
    useConsoleLink: prepare<[string, string]>("UPDATE console_links SET used_at = ? WHERE sha256 = ?"),
    insertConsoleSession: prepare<[string, string, string, string, string, number, string]>(
      `INSERT INTO console_sessions (sha256, id, account_id, created_at, expires_at, idle_timeout_ms, last_seen_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
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

  const redeemConsoleLink = db.transaction((linkSha256: string, input: NewConsoleSession) => {
    const row = sql.consoleLink.get(linkSha256);
    const at = now();
    if (!row || !linkRedeemable(toConsoleLink(row), Date.parse(at))) return null;
    const account = accountById.get(row.account_id);
    if (!account) return null;
    sql.useConsoleLink.run(at, linkSha256);
    const session: ConsoleSessionRecord = {
      id: newId("session"),
      accountId: row.account_id,
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
    );
    return { session, account: toAccount(account) };
  });

  const useConsoleSession = db.transaction((sha256: string) => {
    const row = sql.consoleSession.get(sha256);
    if (!row) return null;
    const account = accountById.get(row.account_id);
    if (!account) return null;
    const session = toConsoleSession(row);
    const at = now();
    if (sessionUsable(session, Date.parse(at))) {
      sql.touchConsoleSession.run(at, sha256);
      session.lastSeenAt = at;
    }
    return { session, account: toAccount(account) };
  });

  return {
    async createConsoleLink(input) {
      if (!accountById.get(input.accountId)) {
        throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
      }
      sql.insertConsoleLink.run(
        input.sha256,
        input.accountId,
        now(),
        new Date(input.expiresAt).toISOString(),
      );
    },
    async redeemConsoleLink(linkSha256, session) {
      return redeemConsoleLink.immediate(linkSha256, session);
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
