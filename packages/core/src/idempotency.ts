/**
 * How long an Idempotency-Key is kept: 24 hours from its first request (docs/api/messages-and-streams.md,
 * "Idempotency"). Every service that keeps something under a key keeps it this long.
 */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
