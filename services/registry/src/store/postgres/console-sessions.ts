import { newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { PgDatabase } from "@agentry/pg";
import type pg from "pg";
import { linkRedeemable, sessionUsable } from "../console-sessions.js";
import type {
  ConsoleLinkRecord,
  ConsoleSessionRecord,
  ConsoleSessionStore,
  NewConsoleSession,
  SignedIn,
} from "../types.js";
import { type AccountRow, type postgresAccounts, toAccount } from "./accounts.js";
import { type MemberRow, memberStatements, toMember } from "./members.js";
import { iso, isoOrNull, now } from "./shared.js";

interface ConsoleLinkRow {
  account_id: string;
  member_id: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

interface ConsoleSessionRow {
  id: string;
  account_id: string;
  member_id: string | null;
  created_at: Date;
  expires_at: Date;
  idle_timeout_ms: string;
  last_seen_at: Date;
  ended_at: Date | null;
}

function toConsoleLink(row: ConsoleLinkRow): ConsoleLinkRecord {
  return {
    accountId: row.account_id,
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    usedAt: isoOrNull(row.used_at),
  };
}

function toConsoleSession(row: ConsoleSessionRow): ConsoleSessionRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    memberId: row.member_id ?? "",
    createdAt: iso(row.created_at),
    expiresAt: iso(row.expires_at),
    idleTimeoutMs: Number(row.idle_timeout_ms),
    lastSeenAt: iso(row.last_seen_at),
    endedAt: isoOrNull(row.ended_at),
  };
}

function statements(s: string) {
  return {
    insertConsoleLink: `INSERT INTO ${s}.console_links (sha256, account_id, created_at, expires_at, member_id)
      SELECT $1::text, id, $3::timestamptz, $4::timestamptz, $5::text FROM ${s}.accounts WHERE id = $2
      RETURNING sha256`,
    consoleLinkForUpdate: `SELECT * FROM ${s}.console_links WHERE sha256 = $1 FOR UPDATE`,
    useConsoleLink: `UPDATE ${s}.console_links SET used_at = $2 WHERE sha256 = $1`,
    insertConsoleSession: `INSERT INTO ${s}.console_sessions
        (sha256, id, account_id, created_at, expires_at, idle_timeout_ms, last_seen_at, member_id)
      VALUES ($1, $2, $3, $4, $5, $6, $4, $7)`,
    consoleSessionForUpdate: `SELECT * FROM ${s}.console_sessions WHERE sha256 = $1 FOR UPDATE`,
    touchConsoleSession: `UPDATE ${s}.console_sessions SET last_seen_at = $2 WHERE sha256 = $1`,
    endConsoleSession: `UPDATE ${s}.console_sessions SET ended_at = COALESCE(ended_at, $2) WHERE sha256 = $1
      RETURNING sha256`,
    deleteExpiredConsoleLinks: `DELETE FROM ${s}.console_links WHERE sha256 IN (
        SELECT sha256 FROM ${s}.console_links WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    deleteExpiredConsoleSessions: `DELETE FROM ${s}.console_sessions WHERE sha256 IN (
        SELECT sha256 FROM ${s}.console_sessions WHERE expires_at <= $1 OR ended_at IS NOT NULL
        LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  };
}

/** Console sign-in links and the sessions they open, each for an account that still exists. */
export function postgresConsoleSessions(
  db: PgDatabase,
  schema: string,
  { accountById }: Pick<ReturnType<typeof postgresAccounts>, "accountById">,
): ConsoleSessionStore {
  const sql = statements(schema);
  const members = memberStatements(schema);

  /** Opens a session for the member, in the caller's transaction. */
  async function open(
    client: pg.PoolClient,
    account: AccountRow,
    memberId: string,
    input: NewConsoleSession,
    at: string,
  ): Promise<SignedIn | null> {
    const member = (await client.query<MemberRow>(members.member, [account.id, memberId])).rows[0];
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
    await client.query(sql.insertConsoleSession, [
      input.sha256,
      session.id,
      session.accountId,
      session.createdAt,
      session.expiresAt,
      session.idleTimeoutMs,
      memberId,
    ]);
    return { session, account: toAccount(account), member: toMember(member) };
  }

  return {
    async createConsoleLink(input): Promise<void> {
      if (
        input.memberId !== undefined &&
        (await db.query(members.member, [input.accountId, input.memberId])).length === 0
      ) {
        throw new AppError("MEMBER_NOT_FOUND", `Member ${input.memberId} does not exist.`);
      }
      const rows = await db.query(sql.insertConsoleLink, [
        input.sha256,
        input.accountId,
        now(),
        new Date(input.expiresAt).toISOString(),
        input.memberId ?? null,
      ]);
      if (rows.length === 0) throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
    },
    async redeemConsoleLink(linkSha256: string, input: NewConsoleSession): Promise<SignedIn | null> {
      return db.transaction(async (client) => {
        const row = (await client.query<ConsoleLinkRow>(sql.consoleLinkForUpdate, [linkSha256])).rows[0];
        const at = now();
        if (!row || !linkRedeemable(toConsoleLink(row), Date.parse(at))) return null;
        const account = (await client.query<AccountRow>(accountById, [row.account_id])).rows[0];
        if (!account) return null;
        const memberId =
          input.memberId ??
          row.member_id ??
          (await client.query<MemberRow>(members.firstOwner, [account.id])).rows[0]?.id;
        if (memberId === undefined) return null;
        await client.query(sql.useConsoleLink, [linkSha256, at]);
        return open(client, account, memberId, input, at);
      });
    },
    async openConsoleSession(
      accountId: string,
      memberId: string,
      input: NewConsoleSession,
    ): Promise<SignedIn | null> {
      return db.transaction(async (client) => {
        const account = (await client.query<AccountRow>(accountById, [accountId])).rows[0];
        return account ? open(client, account, memberId, input, now()) : null;
      });
    },
    async useConsoleSession(sha256: string): Promise<SignedIn | null> {
      return db.transaction(async (client) => {
        const row = (await client.query<ConsoleSessionRow>(sql.consoleSessionForUpdate, [sha256])).rows[0];
        if (!row) return null;
        const account = (await client.query<AccountRow>(accountById, [row.account_id])).rows[0];
        if (!account) return null;
        const member =
          row.member_id === null
            ? undefined
            : (await client.query<MemberRow>(members.member, [row.account_id, row.member_id])).rows[0];
        const session = toConsoleSession(row);
        const at = now();
        if (member && sessionUsable(session, Date.parse(at))) {
          await client.query(sql.touchConsoleSession, [sha256, at]);
          session.lastSeenAt = at;
        }
        return { session, account: toAccount(account), member: member ? toMember(member) : null };
      });
    },
    async endConsoleSession(sha256: string): Promise<boolean> {
      return (await db.query(sql.endConsoleSession, [sha256, now()])).length > 0;
    },
    async deleteExpiredConsoleSessions(limit: number): Promise<number> {
      const at = now();
      return db.transaction(async (client) => {
        const links = (await client.query(sql.deleteExpiredConsoleLinks, [at, limit])).rowCount ?? 0;
        return links + ((await client.query(sql.deleteExpiredConsoleSessions, [at, limit])).rowCount ?? 0);
      });
    },
  };
}
