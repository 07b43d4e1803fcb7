import {
  API_KEY_PREFIX,
  FULL_ACCESS,
  grantedScopes,
  isScope,
  isWellFormedApiKey,
  type Limits,
  type Scope,
  sha256Hex,
  type Tier,
} from "@agentry/core";
import { AppError } from "@agentry/errors";
import {
  type Account,
  type AccountService,
  type ApiKey,
  type Limits as LimitsMessage,
  Tier as TierEnum,
} from "@agentry/proto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { CallOptions, Client } from "@connectrpc/connect";
import type { Principal } from "../context.js";

interface Entry {
  principal: Promise<Principal>;
  /** When the entry must be checked with the registry again. */
  staleAtMs: number;
  keyId?: string;
  /** The key's own expiry, enforced even while the entry is fresh. */
  keyExpiresAtMs?: number;
}

const MAX_ENTRIES = 10_000;

const TIERS: Record<TierEnum, Tier> = {
  [TierEnum.UNSPECIFIED]: "standard",
  [TierEnum.STANDARD]: "standard",
  [TierEnum.PRO]: "pro",
  [TierEnum.ENTERPRISE]: "enterprise",
};

/**
 * Verifies Bearer keys. A malformed key (wrong prefix, length or checksum) is refused without a lookup; a
 * well-formed one is looked up by its SHA-256 and the answer kept for `ttlMs`, so a burst of requests costs one
 * registry call. Concurrent requests with the same key share one lookup. A revocation through this gateway
 * drops the entry at once; one made elsewhere takes effect within `ttlMs`.
 *
 * Answers are kept by the `Authorization` value itself, so a request whose answer is kept costs one map lookup:
 * no parse, checksum or SHA-256 (which were most of this step's own cost). The price is that the keys in use are
 * held in this process's memory as they were sent, as every request's headers are while it runs: entries are
 * swept once stale, so a key is held at most about `2 × ttlMs` after its last request. The registry still only
 * ever sees, and only stores, the SHA-256.
 */
export class Authenticator {
  /** By `Authorization` value. */
  private readonly entries = new Map<string, Entry>();
  private sweep: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly accounts: Client<typeof AccountService>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(authorization: string, options: CallOptions): Promise<Principal> {
    const now = this.now();
    let entry = this.entries.get(authorization);
    if (!entry || entry.staleAtMs <= now) {
      entry = this.lookUp(authorization, wellFormedKey(authorization), options);
    }
    if (entry.keyExpiresAtMs !== undefined && entry.keyExpiresAtMs <= now) {
      this.entries.delete(authorization);
      throw new AppError("UNAUTHORIZED", "The API key is invalid, revoked or expired.");
    }
    return entry.principal;
  }

  /** Forgets a key at once, for revocations made through this gateway. */
  invalidateKey(keyId: string): void {
    for (const [authorization, entry] of this.entries) {
      if (entry.keyId === keyId) this.entries.delete(authorization);
    }
  }

  private lookUp(authorization: string, secret: string, options: CallOptions): Entry {
    const entry: Entry = {
      staleAtMs: this.now() + this.ttlMs,
      principal: this.accounts.verifyApiKey({ secretSha256: sha256Hex(secret) }, options).then((response) => {
        const key = response.apiKey!;
        const account = response.account!;
        entry.keyId = key.id;
        if (key.expireTime) entry.keyExpiresAtMs = timestampDate(key.expireTime).getTime();
        return {
          keyId: key.id,
          actor: { type: "key", id: key.id, createdBy: key.createdBy || null },
          accountId: account.id,
          scopes: new Set(heldScopes(key)),
          fullAccess: key.fullAccess,
          ...accountPlan(account),
        };
      }),
    };
    // A failed lookup is not cached: the next request asks again.
    entry.principal.catch(() => {
      if (this.entries.get(authorization) === entry) this.entries.delete(authorization);
    });
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(authorization, entry);
    this.sweepLater();
    return entry;
  }

  /** Drops the stale entries `ttlMs` from now, and again after that while any are left. */
  private sweepLater(): void {
    if (this.sweep) return;
    this.sweep = setTimeout(() => {
      this.sweep = undefined;
      const now = this.now();
      for (const [authorization, entry] of this.entries) {
        if (entry.staleAtMs <= now) this.entries.delete(authorization);
      }
      if (this.entries.size > 0) this.sweepLater();
    }, this.ttlMs);
    this.sweep.unref();
  }
}

/** The key of an `Authorization: Bearer <key>` value, refused when the header or the key is malformed. */
function wellFormedKey(authorization: string): string {
  if (authorization === "") {
    throw new AppError("UNAUTHORIZED", "Missing API key: send the header 'Authorization: Bearer <API key>'.");
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match) {
    throw new AppError("UNAUTHORIZED", "The Authorization header must have the form 'Bearer <API key>'.");
  }
  const secret = match[1]!;
  if (!isWellFormedApiKey(secret)) {
    throw new AppError(
      "UNAUTHORIZED",
      `The API key is malformed: keys start with '${API_KEY_PREFIX}' and carry a checksum.`,
    );
  }
  return secret;
}

/**
 * The scopes a key holds here. Full access is every scope this gateway knows, not the list the registry sent
 * (a registry of an older version lists fewer); names this gateway does not know are left out.
 */
export function heldScopes(key: ApiKey): Scope[] {
  return grantedScopes(key.fullAccess ? FULL_ACCESS : key.scopes.filter(isScope));
}

/** The tier and the limits in force of the caller's account, as the registry reports them. */
export function accountPlan(account: Account): Pick<Principal, "tier" | "limits"> {
  return { tier: TIERS[account.tier], limits: toLimits(account.limits) };
}

function toLimits(message: LimitsMessage | undefined): Limits {
  return {
    requestsPerMinute: message?.requestsPerMinute ?? 0,
    createPerMinute: message?.createPerMinute ?? 0,
    listPerMinute: message?.listPerMinute ?? 0,
    getPerMinute: message?.getPerMinute ?? 0,
    updatePerMinute: message?.updatePerMinute ?? 0,
    deletePerMinute: message?.deletePerMinute ?? 0,
    messagesPerMinute: message?.messagesPerMinute ?? 0,
    concurrentMessages: message?.concurrentMessages ?? 0,
    maxAgents: message?.maxAgents ?? 0,
  };
}

/** Refuses the request unless the caller's key (or the session's member's role) holds the scope. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (principal.scopes.has(scope)) return;
  if (principal.member) {
    throw new AppError(
      "FORBIDDEN",
      `Your role '${principal.member.role}' does not allow this operation (it needs the '${scope}' scope): ask an owner or admin of the account.`,
    );
  }
  throw new AppError("FORBIDDEN", `This API key lacks the '${scope}' scope required for this operation.`);
}
