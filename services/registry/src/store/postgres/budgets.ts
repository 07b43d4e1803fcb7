import {
  BUDGET_BOUNDS,
  type Budget,
  type BudgetPeriod,
  type BudgetUnit,
  newAuditEvent,
  newId,
} from "@agentry/core";
import type { PgAuditLog, PgDatabase } from "@agentry/pg";
import { budgetAudit } from "../audit.js";
import {
  type BudgetPatch,
  type BudgetStore,
  budgetQuotaExceeded,
  budgetTargetMissing,
  type NewBudget,
} from "../budgets.js";
import { iso, now } from "./shared.js";

interface BudgetRow {
  id: string;
  account_id: string;
  agent_id: string | null;
  api_key_id: string | null;
  unit: BudgetUnit;
  period: BudgetPeriod;
  budget_limit: string;
  created_at: Date;
  updated_at: Date;
}

function toBudget(row: BudgetRow): Budget {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    apiKeyId: row.api_key_id,
    unit: row.unit,
    period: row.period,
    limit: Number(row.budget_limit),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function statements(s: string) {
  return {
    lockAccount: `SELECT id FROM ${s}.accounts WHERE id = $1 FOR NO KEY UPDATE`,
    count: `SELECT count(*)::int AS n FROM ${s}.budgets WHERE account_id = $1`,
    agentExists: `SELECT 1 FROM ${s}.agents WHERE account_id = $1 AND id = $2`,
    keyExists: `SELECT 1 FROM ${s}.api_keys WHERE account_id = $1 AND id = $2`,
    insert: `INSERT INTO ${s}.budgets
        (id, account_id, agent_id, api_key_id, unit, period, budget_limit, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
    list: `SELECT * FROM ${s}.budgets WHERE account_id = $1 ORDER BY created_at, id`,
    getForUpdate: `SELECT * FROM ${s}.budgets WHERE account_id = $1 AND id = $2 FOR UPDATE`,
    update: `UPDATE ${s}.budgets SET budget_limit = COALESCE($3, budget_limit), period = COALESCE($4, period),
        updated_at = $5 WHERE account_id = $1 AND id = $2 RETURNING *`,
    delete: `DELETE FROM ${s}.budgets WHERE account_id = $1 AND id = $2 RETURNING id`,
  };
}

/** Spend budgets in the registry's Postgres schema. */
export function postgresBudgets(db: PgDatabase, schema: string, audit: PgAuditLog): BudgetStore {
  const sql = statements(schema);
  return {
    async createBudget(input: NewBudget) {
      return db.transaction(async (client) => {
        // The account's row lock makes the count and the insert one step for every connection.
        await client.query(sql.lockAccount, [input.accountId]);
        const present =
          input.agentId !== null
            ? (await client.query(sql.agentExists, [input.accountId, input.agentId])).rows.length > 0
            : input.apiKeyId !== null
              ? (await client.query(sql.keyExists, [input.accountId, input.apiKeyId])).rows.length > 0
              : true;
        if (!present) throw budgetTargetMissing(input);
        const count = (await client.query<{ n: number }>(sql.count, [input.accountId])).rows[0]?.n ?? 0;
        if (count >= BUDGET_BOUNDS.maxPerAccount) throw budgetQuotaExceeded();
        const at = now();
        const budget: Budget = { id: newId("budget"), ...input, createdAt: at, updatedAt: at };
        await client.query(sql.insert, [
          budget.id,
          budget.accountId,
          budget.agentId,
          budget.apiKeyId,
          budget.unit,
          budget.period,
          budget.limit,
          at,
        ]);
        await audit.record(client, budget.accountId, newAuditEvent(budgetAudit.create(budget)));
        return budget;
      });
    },
    async listBudgets(accountId) {
      return (await db.query<BudgetRow>(sql.list, [accountId])).map(toBudget);
    },
    async updateBudget(accountId, id, patch: BudgetPatch) {
      return db.transaction(async (client) => {
        const old = (await client.query<BudgetRow>(sql.getForUpdate, [accountId, id])).rows[0];
        if (!old) return null;
        const row = (
          await client.query<BudgetRow>(sql.update, [
            accountId,
            id,
            patch.limit ?? null,
            patch.period ?? null,
            now(),
          ])
        ).rows[0]!;
        const after = toBudget(row);
        await audit.record(client, accountId, newAuditEvent(budgetAudit.update(toBudget(old), after)));
        return after;
      });
    },
    async deleteBudget(accountId, id) {
      return db.transaction(async (client) => {
        if ((await client.query(sql.delete, [accountId, id])).rows.length === 0) return false;
        await audit.record(client, accountId, newAuditEvent(budgetAudit.delete(id)));
        return true;
      });
    },
  };
}
