import type { Budget } from "@agentry/core";
import { type AuditEntry, auditChanges, publicSettings, REDACTED } from "@agentry/core";
import type { AccountRecord, AgentRecord, ApiKeyRecord, MemberRecord } from "./types.js";

/*
 * What the registry records of each change (docs/api/audit.md): the action, the resource and the fields changed.
 * A key's secret and a secret's value never reach the store; an agent's write-only `settings.secrets` is recorded
 * as "[redacted]".
 */

/** An agent's recorded fields: its settings without the write-only secrets, marked when they are there. */
function agentFields(agent: AgentRecord): Record<string, unknown> {
  const {
    id: _id,
    accountId: _account,
    createdAt: _created,
    updatedAt: _updated,
    statusReason: _r,
    ...fields
  } = agent;
  const settings = publicSettings(agent.settings);
  return {
    ...fields,
    settings: settings === agent.settings ? settings : { ...settings, secrets: REDACTED },
  };
}

export const agentAudit = {
  create: (agent: AgentRecord): AuditEntry => ({
    action: "agent.create",
    target: { type: "agent", id: agent.id },
    changes: auditChanges({}, { name: agent.name }),
  }),
  update: (before: AgentRecord, after: AgentRecord): AuditEntry => ({
    action: "agent.update",
    target: { type: "agent", id: after.id },
    changes: auditChanges(agentFields(before), agentFields(after)),
  }),
  delete: (id: string): AuditEntry => ({ action: "agent.delete", target: { type: "agent", id } }),
};

export const secretAudit = {
  // A secret's target is the agent's secret by name: `<agentId>/<NAME>`; its value is never recorded.
  set: (agentId: string, name: string, replaced: boolean): AuditEntry => ({
    action: "secret.set",
    target: { type: "secret", id: `${agentId}/${name}` },
    changes: { value: { from: replaced ? REDACTED : null, to: REDACTED } },
  }),
  delete: (agentId: string, name: string): AuditEntry => ({
    action: "secret.delete",
    target: { type: "secret", id: `${agentId}/${name}` },
  }),
};

export const keyAudit = {
  create: (key: ApiKeyRecord): AuditEntry => ({
    action: "key.create",
    target: { type: "key", id: key.id },
    changes: auditChanges(
      {},
      { name: key.name, scopes: key.fullAccess ? "*" : key.scopes, expiresAt: key.expiresAt },
    ),
  }),
  revoke: (key: ApiKeyRecord): AuditEntry => ({
    action: "key.revoke",
    target: { type: "key", id: key.id },
    changes: auditChanges({}, { revokedAt: key.revokedAt }),
  }),
};

function memberFields(member: MemberRecord) {
  return { email: member.email, name: member.name, role: member.role };
}

export const memberAudit = {
  invite: (member: MemberRecord): AuditEntry => ({
    action: "member.invite",
    target: { type: "member", id: member.id },
    changes: auditChanges({}, memberFields(member)),
  }),
  update: (before: MemberRecord, after: MemberRecord): AuditEntry => ({
    action: "member.update",
    target: { type: "member", id: after.id },
    changes: auditChanges(memberFields(before), memberFields(after)),
  }),
  remove: (id: string): AuditEntry => ({ action: "member.remove", target: { type: "member", id } }),
};

function budgetFields(budget: Budget) {
  return { limit: budget.limit, period: budget.period, unit: budget.unit };
}

export const budgetAudit = {
  create: (budget: Budget): AuditEntry => ({
    action: "budget.create",
    target: { type: "budget", id: budget.id },
    changes: auditChanges(
      {},
      { ...budgetFields(budget), agentId: budget.agentId, apiKeyId: budget.apiKeyId },
    ),
  }),
  update: (before: Budget, after: Budget): AuditEntry => ({
    action: "budget.update",
    target: { type: "budget", id: after.id },
    changes: auditChanges(budgetFields(before), budgetFields(after)),
  }),
  delete: (id: string): AuditEntry => ({ action: "budget.delete", target: { type: "budget", id } }),
};

export const accountAudit = {
  create: (account: AccountRecord): AuditEntry => ({
    action: "account.create",
    target: { type: "account", id: account.id },
    changes: auditChanges({}, { name: account.name, tier: account.tier }),
  }),
  update: (before: AccountRecord, after: AccountRecord): AuditEntry => ({
    action: "account.update",
    target: { type: "account", id: after.id },
    changes: auditChanges(
      { tier: before.tier, limitOverrides: before.limitOverrides },
      { tier: after.tier, limitOverrides: after.limitOverrides },
    ),
  }),
};
