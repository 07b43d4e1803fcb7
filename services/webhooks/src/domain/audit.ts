import { type AuditEntry, auditChanges, REDACTED } from "@agentry/core";

/** An endpoint's fields as the audit log records them; its signing secret never is (docs/api/audit.md). */
interface AuditedEndpoint {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
}

function fields(endpoint: AuditedEndpoint) {
  return {
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
  };
}

/** What the webhooks service records of each change to an endpoint. */
export const endpointAudit = {
  create: (endpoint: AuditedEndpoint): AuditEntry => ({
    action: "webhook.create",
    target: { type: "webhook", id: endpoint.id },
    changes: auditChanges({}, fields(endpoint)),
  }),
  update: (before: AuditedEndpoint, after: AuditedEndpoint): AuditEntry => ({
    action: "webhook.update",
    target: { type: "webhook", id: after.id },
    changes: auditChanges(fields(before), fields(after)),
  }),
  /** A new signing secret: that it changed is recorded, never what to. */
  rotateSecret: (id: string): AuditEntry => ({
    action: "webhook.rotate_secret",
    target: { type: "webhook", id },
    changes: { secret: { from: REDACTED, to: REDACTED } },
  }),
  delete: (id: string): AuditEntry => ({ action: "webhook.delete", target: { type: "webhook", id } }),
};
