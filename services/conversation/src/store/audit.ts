import { type AuditEntry, auditChanges } from "@agentry/core";
import type { DocumentRecord, MemoryRecord, ScheduleRecord } from "./types.js";

/*
 * What the conversation service records of each change it makes for a caller (docs/api/audit.md): schedules,
 * documents, memories written or deleted through the API, a conversation deleted, a user erased, an agent's runs
 * cancelled. Memories the service learns from conversations are its own work, not a caller's change.
 */

function scheduleFields(schedule: ScheduleRecord) {
  return {
    cron: schedule.cron,
    timezone: schedule.timezone,
    text: schedule.text,
    userId: schedule.userId,
    roomId: schedule.roomId,
    enabled: schedule.enabled,
  };
}

export const scheduleAudit = {
  create: (schedule: ScheduleRecord): AuditEntry => ({
    action: "schedule.create",
    target: { type: "schedule", id: schedule.id },
    changes: auditChanges({}, { agentId: schedule.agentId, ...scheduleFields(schedule) }),
  }),
  update: (before: ScheduleRecord, after: ScheduleRecord): AuditEntry => ({
    action: "schedule.update",
    target: { type: "schedule", id: after.id },
    changes: auditChanges(scheduleFields(before), scheduleFields(after)),
  }),
  delete: (id: string): AuditEntry => ({ action: "schedule.delete", target: { type: "schedule", id } }),
};

export const documentAudit = {
  create: (document: DocumentRecord): AuditEntry => ({
    action: "document.create",
    target: { type: "document", id: document.id },
    changes: auditChanges(
      {},
      {
        agentId: document.agentId,
        title: document.title,
        contentType: document.contentType,
        sizeBytes: document.sizeBytes,
      },
    ),
  }),
  delete: (id: string): AuditEntry => ({ action: "document.delete", target: { type: "document", id } }),
};

export const memoryAudit = {
  create: (memory: MemoryRecord): AuditEntry => ({
    action: "memory.create",
    target: { type: "memory", id: memory.id },
    changes: auditChanges({}, { agentId: memory.agentId, userId: memory.userId }),
  }),
  delete: (id: string): AuditEntry => ({ action: "memory.delete", target: { type: "memory", id } }),
};

export const historyAudit = {
  deleteConversation: (id: string, messages: number): AuditEntry => ({
    action: "conversation.delete",
    target: { type: "conversation", id },
    changes: { messages: { from: messages, to: 0 } },
  }),
  eraseUser: (userId: string, messages: number): AuditEntry => ({
    action: "user.erase",
    target: { type: "user", id: userId },
    changes: { messages: { from: messages, to: 0 } },
  }),
  cancelRuns: (agentId: string, runIds: readonly string[]): AuditEntry => ({
    action: "run.cancel",
    target: { type: "agent", id: agentId },
    changes: { runs: { from: runIds, to: [] } },
  }),
};
