import {
  type AuditStamp,
  BUDGET_BOUNDS,
  type Budget,
  type BudgetPeriod,
  type BudgetUnit,
  currentAuditStamp,
  newAuditEvent,
  newId,
} from "@agentry/core";
import type { SqliteAuditLog } from "@agentry/sqlite";
import type Database from "better-sqlite3";
import { budgetAudit } from "../audit.js";
import {
  type BudgetPatch,
  type BudgetStore,
  budgetQuotaExceeded,
  budgetTargetMissing,
  type NewBudget,
} from "../budgets.js";
import { now, preparer } from "./shared.js";

interface BudgetRow {
  id: string;
  account_id: string;
  agent_id: string | null;
  api_key_id: string | null;
  unit: BudgetUnit;
  period: BudgetPeriod;
  budget_limit: number;
  created_at: string;
  updated_at: string;
}

function toBudget(row: BudgetRow): Budget {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    apiKeyId: row.api_key_id,
    unit: row.unit,
    period: row.period,
    limit: row.budget_limit,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Spend budgets in the registry's SQLite file. */
export function sqliteBudgets(db: Database.Database, audit: SqliteAuditLog): BudgetStore {
  const prepare = preparer(db);
  const sql = {
    count: prepare<[string], number>("SELECT count(*) FROM budgets WHERE account_id = ?").pluck(),
    agentExists: prepare<[string, string], number>(
      "SELECT 1 FROM agents WHERE account_id = ? AND id = ?",
    ).pluck(),
    keyExists: prepare<[string, string], number>(
      "SELECT 1 FROM api_keys WHERE account_id = ? AND id = ?",
    ).pluck(),
    insert: prepare<[string, string, string | null, string | null, string, string, number, string, string]>(
      `INSERT INTO budgets (id, account_id, agent_id, api_key_id, unit, period, budget_limit, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    list: prepare<[string], BudgetRow>("SELECT * FROM budgets WHERE account_id = ? ORDER BY created_at, id"),
    get: prepare<[string, string], BudgetRow>("SELECT * FROM budgets WHERE account_id = ? AND id = ?"),
    update: prepare<[number, string, string, string, string]>(
      "UPDATE budgets SET budget_limit = ?, period = ?, updated_at = ? WHERE account_id = ? AND id = ?",
    ),
    delete: prepare<[string, string]>("DELETE FROM budgets WHERE account_id = ? AND id = ?"),
  };

  const create = db.transaction((input: NewBudget, stamp: AuditStamp | null): Budget => {
    const present =
      input.agentId !== null
        ? sql.agentExists.get(input.accountId, input.agentId)
        : input.apiKeyId !== null
          ? sql.keyExists.get(input.accountId, input.apiKeyId)
          : 1;
    if (present === undefined) throw budgetTargetMissing(input);
    if ((sql.count.get(input.accountId) ?? 0) >= BUDGET_BOUNDS.maxPerAccount) throw budgetQuotaExceeded();
    const at = now();
    const budget: Budget = { id: newId("budget"), ...input, createdAt: at, updatedAt: at };
    sql.insert.run(
      budget.id,
      budget.accountId,
      budget.agentId,
      budget.apiKeyId,
      budget.unit,
      budget.period,
      budget.limit,
      at,
      at,
    );
    audit.record(budget.accountId, newAuditEvent(budgetAudit.create(budget), stamp));
    return budget;
  });

  const update = db.transaction(
    (accountId: string, id: string, patch: BudgetPatch, stamp: AuditStamp | null): Budget | null => {
      const row = sql.get.get(accountId, id);
      if (!row) return null;
      const before = toBudget(row);
      const next = { ...before, ...patch, updatedAt: now() };
      sql.update.run(next.limit, next.period, next.updatedAt, accountId, id);
      audit.record(accountId, newAuditEvent(budgetAudit.update(before, next), stamp));
      return next;
    },
  );

  const remove = db.transaction((accountId: string, id: string, stamp: AuditStamp | null): boolean => {
    if (sql.delete.run(accountId, id).changes === 0) return false;
    audit.record(accountId, newAuditEvent(budgetAudit.delete(id), stamp));
    return true;
  });

  return {
    async createBudget(input) {
      // The count and the insert take the write lock together, so simultaneous creates never pass the maximum.
      return create.immediate(input, currentAuditStamp());
    },
    async listBudgets(accountId) {
      return sql.list.all(accountId).map(toBudget);
    },
    async updateBudget(accountId, id, patch) {
      return update.immediate(accountId, id, patch, currentAuditStamp());
    },
    async deleteBudget(accountId, id) {
      return remove.immediate(accountId, id, currentAuditStamp());
    },
  };
}
