import { z } from "@agentry/config";
import {
  FULL_ACCESS,
  grantedScopes,
  isId,
  isScope,
  LIMIT_NAMES,
  type LimitName,
  type Limits,
  SCOPES,
  type ScopeGrant,
  TIERS,
  type Tier,
} from "@agentry/core";
import { UsageError } from "./errors.js";

/** Checks of option values given on the command line; every problem is a UsageError naming the value. */

const MAX_NAME_LENGTH = 200;

function isTier(value: string): value is Tier {
  return (TIERS as readonly string[]).includes(value);
}

function isLimitName(value: string): value is LimitName {
  return (LIMIT_NAMES as readonly string[]).includes(value);
}

export function parseTier(value: string | undefined): Tier {
  if (value === undefined) return "standard";
  if (!isTier(value)) throw new UsageError(`unknown tier '${value}' (tiers: ${TIERS.join(", ")})`);
  return value;
}

export function parseAccountName(value: string): string {
  const name = value.trim();
  if (name.length === 0) throw new UsageError("the account name is empty");
  if (name.length > MAX_NAME_LENGTH) {
    throw new UsageError(`the account name is longer than ${MAX_NAME_LENGTH} characters`);
  }
  // `--account` takes a name or an id, so a name shaped like an id would be ambiguous.
  if (isId("account", name)) throw new UsageError(`the account name '${name}' looks like an account id`);
  return name;
}

export function parseKeyName(value: string | undefined): string {
  const name = (value ?? "").trim();
  if (name.length > MAX_NAME_LENGTH)
    throw new UsageError(`--name is longer than ${MAX_NAME_LENGTH} characters`);
  return name;
}

/** `--limit NAME=VALUE` options, which only enterprise accounts take. */
export function parseLimitOverrides(values: readonly string[] | undefined, tier: Tier): Partial<Limits> {
  const overrides: Partial<Limits> = {};
  if (values === undefined || values.length === 0) return overrides;
  if (tier !== "enterprise") {
    throw new UsageError(`--limit applies only to enterprise accounts (add --tier enterprise)`);
  }
  for (const value of values) {
    const separator = value.indexOf("=");
    if (separator < 0) throw new UsageError(`--limit takes NAME=VALUE, got '${value}'`);
    const name = value.slice(0, separator);
    const amount = value.slice(separator + 1);
    if (!isLimitName(name)) {
      throw new UsageError(`unknown limit '${name}' (limits: ${LIMIT_NAMES.join(", ")})`);
    }
    const number = Number(amount);
    // Limits travel as 32-bit integers between the services.
    if (!/^[1-9][0-9]*$/.test(amount) || number > 2_147_483_647) {
      throw new UsageError(`limit ${name} must be an integer from 1 to 2147483647, got '${amount}'`);
    }
    if (name in overrides) throw new UsageError(`limit ${name} is given twice`);
    overrides[name] = number;
  }
  return overrides;
}

/** `--scopes a,b`: known scopes in their canonical order; none given means all of them. */
/** `--scopes a,b`; left out, a full-access key (docs/api/auth-keys-and-scopes.md, "Scopes added"). */
export function parseScopes(value: string | undefined): ScopeGrant {
  if (value === undefined) return FULL_ACCESS;
  const given = value
    .split(",")
    .map((scope) => scope.trim())
    .filter((scope) => scope.length > 0);
  if (given.length === 0)
    throw new UsageError(`--scopes needs at least one scope (scopes: ${SCOPES.join(", ")})`);
  for (const scope of given) {
    if (!isScope(scope)) throw new UsageError(`unknown scope '${scope}' (scopes: ${SCOPES.join(", ")})`);
  }
  return grantedScopes(given.filter(isScope));
}

// A date alone means midnight UTC; a time must say its offset, so the expiry does not depend on the machine.
const ISO_8601 = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/** An ISO 8601 date (midnight UTC) or date-time with offset, as given to `option`; undefined when not given. */
export function parseTime(option: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  if (!ISO_8601.safeParse(value).success) {
    throw new UsageError(
      `${option} takes an ISO 8601 date or date-time with offset (2026-03-01 or 2026-03-01T12:00:00Z), got '${value}'`,
    );
  }
  return new Date(value);
}

/** `--expires`: an ISO 8601 date or date-time in the future, returned as UTC with milliseconds. */
export function parseExpiry(value: string | undefined, now: Date): string | null {
  if (value === undefined) return null;
  if (!ISO_8601.safeParse(value).success) {
    throw new UsageError(
      `--expires takes an ISO 8601 date or date-time with offset (2027-01-31 or 2027-01-31T12:00:00Z), got '${value}'`,
    );
  }
  const expiresAt = new Date(value);
  if (expiresAt.getTime() <= now.getTime()) throw new UsageError(`--expires ${value} is not in the future`);
  return expiresAt.toISOString();
}
