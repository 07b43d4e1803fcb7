import { newAuditEvent, newId, type Role } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { PgAuditLog, PgDatabase } from "@agentry/pg";
import { memberAudit } from "../audit.js";
import {
  applyMemberChange,
  assertOwnerKept,
  memberExists,
  memberPage,
  memberPageOf,
  normalEmail,
} from "../members.js";
import type { MemberChange, MemberRecord, MemberStore, NewMember } from "../types.js";
import { iso, now } from "./shared.js";

export interface MemberRow {
  id: string;
  account_id: string;
  email: string | null;
  name: string;
  role: Role;
  created_at: Date;
}

export function toMember(row: MemberRow): MemberRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    email: row.email,
    name: row.name,
    role: row.role,
    createdAt: iso(row.created_at),
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown }).code === "23505";
}

/** The statements the other aggregates use in their own transactions. */
export function memberStatements(s: string) {
  return {
    member: `SELECT * FROM ${s}.members WHERE account_id = $1 AND id = $2`,
    firstOwner: `SELECT * FROM ${s}.members WHERE account_id = $1 AND role = 'owner' ORDER BY created_at, id LIMIT 1`,
  };
}

function statements(s: string) {
  return {
    ...memberStatements(s),
    insert: `INSERT INTO ${s}.members (id, account_id, email, name, role, created_at)
      SELECT $1::text, id, $3::text, $4::text, $5::text, $6::timestamptz FROM ${s}.accounts WHERE id = $2
      RETURNING id`,
    page: {
      ASC: `SELECT * FROM ${s}.members WHERE account_id = $1 ORDER BY id LIMIT $2`,
      DESC: `SELECT * FROM ${s}.members WHERE account_id = $1 ORDER BY id DESC LIMIT $2`,
    },
    after: `SELECT * FROM ${s}.members WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
    before: `SELECT * FROM ${s}.members WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
    // The account's row is locked first: changes to one account's owners are checked one after another.
    lockAccount: `SELECT id FROM ${s}.accounts WHERE id = $1 FOR NO KEY UPDATE`,
    memberForUpdate: `SELECT * FROM ${s}.members WHERE account_id = $1 AND id = $2 FOR UPDATE`,
    owners: `SELECT count(*)::int AS n FROM ${s}.members WHERE account_id = $1 AND role = 'owner'`,
    update: `UPDATE ${s}.members SET email = $2, name = $3, role = $4 WHERE id = $1`,
    delete: `DELETE FROM ${s}.members WHERE id = $1`,
    endSessions: `DELETE FROM ${s}.console_sessions WHERE member_id = $1`,
    dropLinks: `DELETE FROM ${s}.console_links WHERE member_id = $1`,
    byEmail: `SELECT * FROM ${s}.members WHERE email = $1 ORDER BY created_at, id`,
  };
}

/** Members of accounts. */
export function postgresMembers(db: PgDatabase, schema: string, audit: PgAuditLog): MemberStore {
  const sql = statements(schema);
  return {
    async createMember(input: NewMember): Promise<MemberRecord> {
      const member: MemberRecord = {
        id: newId("member"),
        accountId: input.accountId,
        email: normalEmail(input.email),
        name: input.name,
        role: input.role,
        createdAt: now(),
      };
      try {
        await db.transaction(async (client) => {
          const { rows } = await client.query(sql.insert, [
            member.id,
            member.accountId,
            member.email,
            member.name,
            member.role,
            member.createdAt,
          ]);
          if (rows.length === 0)
            throw new AppError("NOT_FOUND", `Account ${input.accountId} does not exist.`);
          await audit.record(client, member.accountId, newAuditEvent(memberAudit.invite(member)));
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw memberExists(member.email!);
        throw error;
      }
      return member;
    },
    async getMember(accountId: string, id: string): Promise<MemberRecord | null> {
      const row = (await db.query<MemberRow>(sql.member, [accountId, id]))[0];
      return row ? toMember(row) : null;
    },
    async listMembers(accountId, query) {
      const page = memberPage(query);
      const rows =
        page.cursor === null
          ? await db.query<MemberRow>(sql.page[page.direction], [accountId, query.limit + 1])
          : await db.query<MemberRow>(sql[page.comparison === ">" ? "after" : "before"], [
              accountId,
              page.cursor,
              query.limit + 1,
            ]);
      return memberPageOf(rows.map(toMember), query, page.reverse);
    },
    async updateMember(accountId: string, id: string, change: MemberChange): Promise<MemberRecord | null> {
      try {
        return await db.transaction(async (client) => {
          await client.query(sql.lockAccount, [accountId]);
          const row = (await client.query<MemberRow>(sql.memberForUpdate, [accountId, id])).rows[0];
          if (!row) return null;
          const before = toMember(row);
          const after = applyMemberChange(before, change);
          const owners = (await client.query<{ n: number }>(sql.owners, [accountId])).rows[0]!.n;
          assertOwnerKept(before, after.role, owners);
          await client.query(sql.update, [id, after.email, after.name, after.role]);
          await audit.record(client, accountId, newAuditEvent(memberAudit.update(before, after)));
          return after;
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw memberExists(normalEmail(change.email ?? ""));
        throw error;
      }
    },
    async deleteMember(accountId: string, id: string): Promise<boolean> {
      return db.transaction(async (client) => {
        await client.query(sql.lockAccount, [accountId]);
        const row = (await client.query<MemberRow>(sql.memberForUpdate, [accountId, id])).rows[0];
        if (!row) return false;
        const owners = (await client.query<{ n: number }>(sql.owners, [accountId])).rows[0]!.n;
        assertOwnerKept(toMember(row), null, owners);
        await client.query(sql.endSessions, [id]);
        await client.query(sql.dropLinks, [id]);
        await client.query(sql.delete, [id]);
        await audit.record(client, accountId, newAuditEvent(memberAudit.remove(id)));
        return true;
      });
    },
    async findMembersByEmail(email: string): Promise<MemberRecord[]> {
      return (await db.query<MemberRow>(sql.byEmail, [normalEmail(email)])).map(toMember);
    },
  };
}
