import { FULL_ACCESS, grantedScopes, isScope, type ScopeGrant } from "@agentry/core";
import type { ApiKeyRecord } from "./types.js";

/**
 * The `scopes` column of both stores: a JSON array of scope names, or `["*"]` for a full-access key, so a key
 * made without scopes also holds the scopes added after it was made.
 */
export function scopesColumn(grant: ScopeGrant): string[] {
  return grant === FULL_ACCESS ? [FULL_ACCESS] : grantedScopes(grant);
}

/**
 * A key's scopes as records carry them. Names this version does not know (written by a later one) are left out:
 * a key never holds a scope no route of this version can check.
 */
export function scopesOfColumn(column: readonly string[]): Pick<ApiKeyRecord, "scopes" | "fullAccess"> {
  if (column.includes(FULL_ACCESS)) return { scopes: grantedScopes(FULL_ACCESS), fullAccess: true };
  return { scopes: grantedScopes(column.filter(isScope)), fullAccess: false };
}
