import { AppError } from "@agentry/errors";

/*
 * Conditional writes (docs/api/agents.md, "Conditional requests"): an agent's `updatedAt` is its version, and a
 * PATCH or DELETE sent with `If-Match` names the version it was based on. The stores check it in the write's own
 * transaction, on the row the write changes, so two writers based on one version cannot both succeed.
 */

/** The `updatedAt` of a change at time `now`: later than the one before, even when the clock has not moved. */
export function nextUpdatedAt(previous: string, now: string): string {
  return now > previous ? now : new Date(Date.parse(previous) + 1).toISOString();
}

/** Refuses a write based on a version the agent no longer has; `expected` undefined: an unconditional write. */
export function assertVersion(record: { id: string; updatedAt: string }, expected: string | undefined): void {
  if (expected === undefined || record.updatedAt === expected) return;
  throw new AppError(
    "PRECONDITION_FAILED",
    `Agent ${record.id} has changed since the version in If-Match (updatedAt ${expected}; it is now ${record.updatedAt}). Read it again with GET /v1/agents/${record.id} and repeat the change with its new ETag if it still applies.`,
  );
}
