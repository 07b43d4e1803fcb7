/**
 * Why generation stopped, in one vocabulary for every provider: `stop` (natural end or stop sequence),
 * `length` (max tokens reached), `content_filter` (content withheld or refused), `other`.
 */
export const FINISH_REASONS = ["stop", "length", "content_filter", "other"] as const;

export type FinishReason = (typeof FINISH_REASONS)[number];
