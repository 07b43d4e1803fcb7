/**
 * How long an Idempotency-Key is kept: 24 hours from its first request (decisions.md, "Idempotency, background
 * messages, resumable streams, fallbacks"). Every service that keeps something under a key keeps it this long.
 */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
