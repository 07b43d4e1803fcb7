export {
  AGENT_BOUNDS,
  CONFLICT_MODES,
  type ConflictMode,
  DEFAULT_CONFLICT_MODE,
  DOCUMENT_BOUNDS,
  FALLBACK_MAX_ITEMS,
  type FallbackChoice,
  fallbackChoices,
  GENERATION_BOUNDS,
  generationSettingsIssues,
  isProviderName,
  MEMORY_BOUNDS,
  MESSAGE_BOUNDS,
  PROVIDER_NAMES,
  PROVIDER_SETUP,
  type ProviderName,
  publicSettings,
  SECRETS_SETTING,
  TOOL_CHOICES,
  type ToolChoice,
  unconfiguredProviderIssue,
  updatedSettings,
} from "./agents.js";
export {
  API_KEY_PREFIX,
  FULL_ACCESS,
  generateApiKey,
  grantedScopes,
  isScope,
  isSha256Hex,
  isWellFormedApiKey,
  SCOPES,
  type Scope,
  type ScopeGrant,
  sha256Hex,
} from "./api-keys.js";
export {
  AUDIT_ACTOR_TYPES,
  AUDIT_HEADERS,
  type AuditActor,
  type AuditActorType,
  type AuditChanges,
  type AuditEntry,
  type AuditEvent,
  type AuditQuery,
  type AuditStamp,
  auditChanges,
  auditHeaders,
  auditStampIn,
  auditStampOf,
  CLI_STAMP,
  currentAuditStamp,
  DEFAULT_AUDIT_RETENTION_DAYS,
  newAuditEvent,
  pruneAuditEvents,
  REDACTED,
  withAuditStamp,
} from "./audit.js";
export {
  BUDGET_BOUNDS,
  BUDGET_PERIODS,
  BUDGET_THRESHOLDS,
  BUDGET_UNITS,
  type Budget,
  type BudgetPeriod,
  type BudgetUnit,
  budgetApplies,
  budgetWindow,
  thresholdsCrossed,
} from "./budgets.js";
export { charCount, exceedsCharacters, TRIMMED_SPACE } from "./characters.js";
export {
  clientTypes,
  clientWarnings,
  isPlatform,
  namesRunPlatform,
  PLATFORM_SECRETS,
  type Platform,
  RUN_PLATFORMS,
} from "./clients.js";
export { FINISH_REASONS, type FinishReason } from "./finish-reasons.js";
export { deepFrozen } from "./frozen.js";
export { IDEMPOTENCY_KEY_TTL_MS } from "./idempotency.js";
export { type IdKind, isId, newId, timeOfId } from "./ids.js";
export { type MapSteps, mapAsyncIterable } from "./iterate.js";
export { PAGE_LIMIT } from "./lists.js";
export { commonJsExports } from "./modules.js";
export { type Repetition, removeInBatches, repeatEvery } from "./periodic.js";
export {
  effectiveLimits,
  LIMIT_NAMES,
  type LimitName,
  type Limits,
  TIER_DEFAULTS,
  TIERS,
  type Tier,
} from "./plans.js";
export {
  costNanoUsd,
  DEFAULT_PRICE_TABLE,
  InvalidPricesError,
  type ModelPrice,
  NANO_USD_PER_USD,
  type PriceTable,
  parsePrices,
  priceOf,
  toUsd,
} from "./prices.js";
export { isEmail, isRole, MEMBER_BOUNDS, ROLE_SCOPES, ROLES, type Role } from "./roles.js";
export {
  MalformedSealedText,
  openPacked,
  openSealed,
  openSealedText,
  SEALED_TEXT_PREFIX,
  type Sealed,
  sealBytes,
  sealPacked,
  sealText,
} from "./seal.js";
export { SizedLru } from "./sized-lru.js";
export { WEBHOOK_BOUNDS } from "./webhooks.js";
