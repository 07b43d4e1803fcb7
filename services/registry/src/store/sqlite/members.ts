import { type AuditStamp, currentAuditStamp, newAuditEvent, newId, type Role } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { GroupCommit, SqliteAuditLog } from "@agentry/sqlite";
import Database from "better-sqlite3";
import { memberAudit } from "../audit.js";
import {
  applyMemberChange,
  assertOwnerKept,
  memberExists,
  memberPage,
  memberPageOf,
  normalEmail,
} from "../members.js";
import type { MemberRecord, MemberStore, NewMember } from "../types.js";
import { now, preparer } from "./shared.js";

export interface MemberRow {
  id: string;
  account_id: string;
  email: string | null;
  name: string;
  role: Role;
  created_at: string;
}

export function toMember(row: MemberRow): MemberRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    email: row.email,
    name: row.name,
    role: row.role,
    createdAt: row.created_at,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === "SQLITE_CONSTRAINT_UNIQUE";
}

/** The statements the other aggregates use in their own transactions. */
export function memberStatements(db: Database.Database) {
  const prepare = preparer(db);
  return {
    insertMember: prepare<[string, string, string | null, string, string, string]>(
      "INSERT INTO members (id, account_id, email, name, role, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    member: prepare<[string, string], MemberRow>("SELECT * FROM members WHERE account_id = ? AND id = ?"),
    firstOwner: prepare<[string], MemberRow>(
      "SELECT * FROM members WHERE account_id = ? AND role = 'owner' ORDER BY created_at, id LIMIT 1",
    ),
  };
}

/** Members of accounts. */
export function sqliteMembers(
  db: Database.Database,
  group: GroupCommit,
  { accountById }: { accountById: Database.Statement<[string], unknown> },
  audit: SqliteAuditLog,
): MemberStore {
  const prepare = preparer(db);
  const shared = memberStatements(db);
  const sql = {
    ...shared,
    page: {
      ASC: prepare<[string, number], MemberRow>(
        "SELECT * FROM members WHERE account_id = ? ORDER BY id LIMIT ?",
      ),
      DESC: prepare<[string, number], MemberRow>(
        "SELECT * FROM members WHERE account_id = ? ORDER BY id DESC LIMIT ?",
      ),
    },
    after: prepare<[string, string, number], MemberRow>(
      "SELECT * FROM members WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?",
    ),
    before: prepare<[string, string, number], MemberRow>(
      "SELECT * FROM members WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
    ),
    owners: prepare<[string], { n: number }>(
      "SELECT count(*) AS n FROM members WHERE account_id = ? AND role = 'owner'",
    ),
    update: prepare<[string | null, string, string, string]>(
      "UPDATE members SET email = ?, name = ?, role = ? WHERE id = ?",
    ),
    delete: prepare<[string]>("DELETE FROM members WHERE id = ?"),
    endSessions: prepare<[string]>("DELETE FROM console_sessions WHERE member_id = ?"),
    dropLinks: prepare<[string]>("DELETE FROM console_links WHERE member_id = ?"),
    byEmail: prepare<[string], MemberRow>("SELECT * FROM members WHERE email = ? ORDER BY created_at, id"),
  };

  const createMember = db.transaction((input: NewMember, stamp: AuditStamp | null): MemberRecord => {
    if (!accountById.get(input.accountId)) {
      throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
    }
    const member: MemberRecord = {
      id: newId("member"),
      accountId: input.accountId,
      email: normalEmail(input.email),
      name: input.name,
      role: input.role,
      createdAt: now(),
    };
    try {
      sql.insertMember.run(
        member.id,
        member.accountId,
        member.email,
        member.name,
        member.role,
        member.createdAt,
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw memberExists(member.email!);
      throw error;
    }
    audit.record(member.accountId, newAuditEvent(memberAudit.invite(member), stamp));
    return member;
  });

  const updateMember = db.transaction(
    (
      accountId: string,
      id: string,
      change: Parameters<MemberStore["updateMember"]>[2],
      stamp: AuditStamp | null,
    ) => {
      const row = sql.member.get(accountId, id);
      if (!row) return null;
      const before = toMember(row);
      const after = applyMemberChange(before, change);
      assertOwnerKept(before, after.role, sql.owners.get(accountId)!.n);
      try {
        sql.update.run(after.email, after.name, after.role, id);
      } catch (error) {
        if (isUniqueViolation(error)) throw memberExists(after.email!);
        throw error;
      }
      audit.record(accountId, newAuditEvent(memberAudit.update(before, after), stamp));
      return after;
    },
  );

  const deleteMember = db.transaction((accountId: string, id: string, stamp: AuditStamp | null): boolean => {
    const row = sql.member.get(accountId, id);
    if (!row) return false;
    assertOwnerKept(toMember(row), null, sql.owners.get(accountId)!.n);
    sql.endSessions.run(id);
    sql.dropLinks.run(id);
    sql.delete.run(id);
    audit.record(accountId, newAuditEvent(memberAudit.remove(id), stamp));
    return true;
  });

  return {
    async createMember(input) {
      const stamp = currentAuditStamp();
      return group.run(() => createMember(input, stamp));
    },
    async getMember(accountId, id) {
      const row = sql.member.get(accountId, id);
      return row ? toMember(row) : null;
    },
    async listMembers(accountId, query) {
      const page = memberPage(query);
      const rows =
        page.cursor === null
          ? sql.page[page.direction].all(accountId, query.limit + 1)
          : sql[page.comparison === ">" ? "after" : "before"].all(accountId, page.cursor, query.limit + 1);
      return memberPageOf(rows.map(toMember), query, page.reverse);
    },
    async updateMember(accountId, id, change) {
      const stamp = currentAuditStamp();
      return group.run(() => updateMember(accountId, id, change, stamp));
    },
    async deleteMember(accountId, id) {
      const stamp = currentAuditStamp();
      return group.run(() => deleteMember(accountId, id, stamp));
    },
    async findMembersByEmail(email) {
      return sql.byEmail.all(normalEmail(email)).map(toMember);
    },
  };
}
