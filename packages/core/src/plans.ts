/** The named limits of a plan (docs/api/limits-and-quotas.md, "Plans and limits"). */
export const LIMIT_NAMES = [
  "requestsPerMinute",
  "createPerMinute",
  "listPerMinute",
  "getPerMinute",
  "updatePerMinute",
  "deletePerMinute",
  "messagesPerMinute",
  "concurrentMessages",
  "maxAgents",
] as const;

export type LimitName = (typeof LIMIT_NAMES)[number];
export type Limits = Record<LimitName, number>;

export const TIERS = ["standard", "pro", "enterprise"] as const;
export type Tier = (typeof TIERS)[number];

const STANDARD: Limits = {
  requestsPerMinute: 60,
  createPerMinute: 10,
  listPerMinute: 60,
  getPerMinute: 60,
  updatePerMinute: 30,
  deletePerMinute: 10,
  messagesPerMinute: 60,
  concurrentMessages: 10,
  maxAgents: 100,
};

/** Each tier's defaults. Enterprise starts from pro's and takes per-account overrides of any limit. */
export const TIER_DEFAULTS: Record<Tier, Limits> = {
  standard: STANDARD,
  pro: { ...STANDARD, requestsPerMinute: 300 },
  enterprise: { ...STANDARD, requestsPerMinute: 300 },
};

/** The limits in force for an account: its tier's defaults with its overrides applied. */
export function effectiveLimits(tier: Tier, overrides: Partial<Limits>): Limits {
  return { ...TIER_DEFAULTS[tier], ...overrides };
}
