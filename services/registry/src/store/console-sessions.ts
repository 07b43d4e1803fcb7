import type { ConsoleLinkRecord, ConsoleSessionRecord } from "./types.js";

/** Whether a sign-in link may still be redeemed at `nowMs`: once, and before it expires. */
export function linkRedeemable(link: ConsoleLinkRecord, nowMs: number): boolean {
  return link.usedAt === null && Date.parse(link.expiresAt) > nowMs;
}

/**
 * Whether a console session may act at `nowMs`: not signed out, before its absolute expiry, and used within its
 * idle timeout.
 */
export function sessionUsable(session: ConsoleSessionRecord, nowMs: number): boolean {
  return (
    session.endedAt === null &&
    Date.parse(session.expiresAt) > nowMs &&
    Date.parse(session.lastSeenAt) + session.idleTimeoutMs > nowMs
  );
}
