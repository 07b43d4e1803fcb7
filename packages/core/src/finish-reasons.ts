/**
 * Why generation stopped, in one vocabulary for every provider: `stop` (natural end or stop sequence),
 * `length` (max tokens reached), `content_filter` (content withheld or refused), `other`, and `cancelled`: a later
 * message to the conversation interrupted it (`onConflict: "interrupt"`), its text is what came before.
 */
export const FINISH_REASONS = ["stop", "length", "content_filter", "other", "cancelled"] as const;

export type FinishReason = (typeof FINISH_REASONS)[number];
