import {
  FULL_ACCESS,
  generateApiKey,
  grantedScopes,
  isEmail,
  isId,
  isScope,
  LIMIT_NAMES,
  type Limits,
  MEMBER_BOUNDS,
  openPacked,
  SCOPES,
  type ScopeGrant,
  sealPacked,
  type Tier,
} from "@agentry/core";
import { AppError, invalid } from "@agentry/errors";
import { type AccountService, auditEventMessage, plainAuditQuery } from "@agentry/proto";
import type { ServiceImpl } from "@connectrpc/connect";
import { sessionUsable } from "../store/console-sessions.js";
import type { AccountRecord, SignedIn } from "../store/types.js";
import type { RegistryContext } from "./context.js";
import {
  accountToProto,
  apiKeyToProto,
  checkSha256,
  consoleSessionToProto,
  fromTimestamp,
  limitsFromProto,
  memberToProto,
  roleFromProto,
  tierFromProto,
} from "./convert.js";
import { createClaim, createSealingKey, storedResponseToProto } from "./idempotency-service.js";

function accountNotFound(what: string): AppError {
  return new AppError("NOT_FOUND", `Account ${what} does not exist.`);
}

const INVALID_KEY = "The API key is invalid, revoked or expired.";
const INVALID_LINK = "The sign-in link is invalid, used or expired: ask for a new one.";
const INVALID_SESSION = "The console session has ended: sign in again.";
/** The longest a console session may last, whatever the caller asks. */
const MAX_SESSION_MS = 30 * 24 * 3600_000;

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function checkOverrides(tier: Tier, overrides: Partial<Limits>): Partial<Limits> {
  const names = LIMIT_NAMES.filter((name) => overrides[name] !== undefined);
  if (names.length > 0 && tier !== "enterprise") {
    throw invalid("limit_overrides", "are allowed only for enterprise accounts");
  }
  for (const name of names) {
    const value = overrides[name]!;
    if (!Number.isInteger(value) || value < 1) {
      throw invalid(`limit_overrides.${snakeCase(name)}`, "must be a positive integer");
    }
  }
  return overrides;
}

/** No scopes asked for makes a full-access key (docs/api/auth-keys-and-scopes.md, "Scopes added"). */
function checkScopes(requested: string[]): ScopeGrant {
  if (requested.length === 0) return FULL_ACCESS;
  const unknown = requested.filter((scope) => !isScope(scope));
  if (unknown.length > 0) {
    throw invalid(
      "scopes",
      `holds unknown scope ${unknown.join(", ")}; known scopes are ${SCOPES.join(", ")}`,
    );
  }
  // Kept in the canonical order, once each.
  return grantedScopes(requested.filter(isScope));
}

function memberNotFound(id: string): AppError {
  return new AppError("MEMBER_NOT_FOUND", `Member ${JSON.stringify(id)} does not exist.`);
}

function checkEmail(email: string): string {
  const trimmed = email.trim();
  if (!isEmail(trimmed)) throw invalid("email", "must be an email address");
  return trimmed;
}

function checkMemberName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "" || [...trimmed].length > MEMBER_BOUNDS.nameMaxLength) {
    throw invalid("name", `must be 1 to ${MEMBER_BOUNDS.nameMaxLength} characters`);
  }
  return trimmed;
}

/** A session as its RPCs answer it. */
function signedInToProto({ session, account, member }: SignedIn) {
  return {
    session: consoleSessionToProto(session),
    account: accountToProto(account),
    ...(member ? { member: memberToProto(member) } : {}),
  };
}

export function accountService({ store, logger }: RegistryContext): ServiceImpl<typeof AccountService> {
  async function existingAccount(id: string): Promise<AccountRecord> {
    const account = await store.getAccount(id);
    if (!account) throw accountNotFound(id);
    return account;
  }

  return {
    async createAccount(request) {
      const name = request.name.trim();
      if (name === "") throw invalid("name", "is required");
      const tier = tierFromProto(request.tier);
      const limitOverrides = checkOverrides(tier, limitsFromProto(request.limitOverrides));
      const owner = {
        ...(request.ownerEmail !== "" ? { email: checkEmail(request.ownerEmail) } : {}),
        ...(request.ownerName !== "" ? { name: checkMemberName(request.ownerName) } : {}),
      };
      const account = await store.createAccount({ name, tier, limitOverrides, owner });
      logger.info({ accountId: account.id, tier }, "account created");
      return { account: accountToProto(account) };
    },

    async getAccount(request) {
      const { lookup } = request;
      if (lookup.case === "id") {
        const account = await store.getAccount(lookup.value);
        if (!account) throw accountNotFound(lookup.value);
        return { account: accountToProto(account) };
      }
      if (lookup.case === "name") {
        const account = await store.getAccountByName(lookup.value);
        if (!account) throw accountNotFound(`named ${lookup.value}`);
        return { account: accountToProto(account) };
      }
      throw invalid("lookup", "needs an id or a name");
    },

    async listAccounts() {
      return { accounts: (await store.listAccounts()).map(accountToProto) };
    },

    async createApiKey(request) {
      const scopes = checkScopes(request.scopes);
      let expiresAt: string | null = null;
      if (request.expireTime) {
        expiresAt = fromTimestamp(request.expireTime);
        if (Date.parse(expiresAt) <= Date.now()) throw invalid("expire_time", "must be in the future");
      }
      const { secret, sha256, prefix } = generateApiKey();
      const input = {
        accountId: request.accountId,
        name: request.name,
        scopes,
        expiresAt,
        sha256,
        prefix,
        createdBy: request.createdBy || null,
      };
      if (request.idempotency) {
        // The secret is kept with the key's record, sealed with a key only the caller can derive again.
        const claim = createClaim(request.idempotency);
        const sealing = createSealingKey(request.idempotency);
        const created = await store.createApiKeyUnderKey(input, {
          ...claim,
          secret: sealPacked(sealing, secret),
        });
        if (created.outcome === "stored") {
          return { storedResponse: storedResponseToProto(created.response), keyClaimed: true };
        }
        const { apiKey } = created.created;
        if (created.outcome === "created") {
          logger.info({ keyId: apiKey.id, accountId: apiKey.accountId, scopes }, "api key created");
          return { apiKey: apiKeyToProto(apiKey), secret, keyClaimed: true };
        }
        const kept = openPacked(sealing, created.created.secret).toString("utf-8");
        return { apiKey: apiKeyToProto(apiKey), secret: kept, replayed: true, keyClaimed: true };
      }
      const key = await store.createApiKey(input);
      logger.info({ keyId: key.id, accountId: key.accountId, scopes }, "api key created");
      return { apiKey: apiKeyToProto(key), secret };
    },

    async listApiKeys(request) {
      await existingAccount(request.accountId);
      return { apiKeys: (await store.listApiKeys(request.accountId)).map(apiKeyToProto) };
    },

    async touchApiKeys(request) {
      const lastUsed = new Map<string, string>();
      for (const use of request.uses) {
        if (use.keyId && use.useTime) lastUsed.set(use.keyId, fromTimestamp(use.useTime));
      }
      await store.touchApiKeys(lastUsed);
      return {};
    },

    async revokeApiKey(request) {
      const started = new Date().toISOString();
      const key = await store.revokeApiKey(request.id, request.accountId || undefined);
      if (!key) throw new AppError("NOT_FOUND", `API key ${request.id} does not exist.`);
      // The store keeps the first revocation time, so an earlier one means this call changed nothing.
      const alreadyRevoked = key.revokedAt !== null && key.revokedAt < started;
      if (!alreadyRevoked) logger.info({ keyId: key.id, accountId: key.accountId }, "api key revoked");
      return { apiKey: apiKeyToProto(key), alreadyRevoked };
    },

    async createConsoleLink(request) {
      const sha256 = checkSha256("token_sha256", request.tokenSha256);
      if (!request.expireTime) throw invalid("expire_time", "is required");
      const expiresAt = fromTimestamp(request.expireTime);
      if (Date.parse(expiresAt) <= Date.now()) throw invalid("expire_time", "must be in the future");
      await store.createConsoleLink({
        accountId: request.accountId,
        sha256,
        expiresAt,
        ...(request.memberId ? { memberId: request.memberId } : {}),
      });
      logger.info({ accountId: request.accountId }, "console sign-in link created");
      return {};
    },

    async redeemConsoleLink(request) {
      const linkSha256 = checkSha256("token_sha256", request.tokenSha256);
      const sha256 = checkSha256("session_sha256", request.sessionSha256);
      if (!request.expireTime) throw invalid("expire_time", "is required");
      const expiresAt = fromTimestamp(request.expireTime);
      const lifetimeMs = Date.parse(expiresAt) - Date.now();
      if (lifetimeMs <= 0 || lifetimeMs > MAX_SESSION_MS) {
        throw invalid("expire_time", "must be in the future, at most 30 days ahead");
      }
      if (request.idleTimeoutSeconds < 1) throw invalid("idle_timeout_seconds", "must be positive");
      const redeemed = await store.redeemConsoleLink(linkSha256, {
        sha256,
        expiresAt,
        idleTimeoutMs: request.idleTimeoutSeconds * 1000,
      });
      if (!redeemed) throw new AppError("UNAUTHORIZED", INVALID_LINK);
      logger.info(
        { sessionId: redeemed.session.id, accountId: redeemed.account.id },
        "console session started",
      );
      return signedInToProto(redeemed);
    },

    async openConsoleSession(request) {
      const sha256 = checkSha256("session_sha256", request.sessionSha256);
      if (!request.expireTime) throw invalid("expire_time", "is required");
      const expiresAt = fromTimestamp(request.expireTime);
      const lifetimeMs = Date.parse(expiresAt) - Date.now();
      if (lifetimeMs <= 0 || lifetimeMs > MAX_SESSION_MS) {
        throw invalid("expire_time", "must be in the future, at most 30 days ahead");
      }
      if (request.idleTimeoutSeconds < 1) throw invalid("idle_timeout_seconds", "must be positive");
      const opened = await store.openConsoleSession(request.accountId, request.memberId, {
        sha256,
        expiresAt,
        idleTimeoutMs: request.idleTimeoutSeconds * 1000,
      });
      if (!opened) throw memberNotFound(request.memberId);
      logger.info(
        { sessionId: opened.session.id, accountId: opened.account.id, memberId: request.memberId },
        "console session started",
      );
      return signedInToProto(opened);
    },

    async createMember(request) {
      const role = roleFromProto(request.role);
      if (role === undefined) throw invalid("role", "is required");
      await existingAccount(request.accountId);
      const member = await store.createMember({
        accountId: request.accountId,
        email: checkEmail(request.email),
        name: checkMemberName(request.name),
        role,
      });
      logger.info({ accountId: member.accountId, memberId: member.id, role }, "member added");
      return { member: memberToProto(member) };
    },

    async getMember(request) {
      const member = isId("member", request.id) ? await store.getMember(request.accountId, request.id) : null;
      if (!member) throw memberNotFound(request.id);
      return { member: memberToProto(member) };
    },

    async listAuditEvents(request) {
      const { accountId, ...query } = plainAuditQuery(request.query);
      if (query.limit < 1 || query.limit > 100) throw invalid("limit", "must be 1 to 100");
      const page = await store.listAuditEvents(accountId, query);
      return { events: page.items.map(auditEventMessage), hasMore: page.hasMore };
    },

    async listMembers(request) {
      if (request.limit < 1 || request.limit > 100) throw invalid("limit", "must be 1 to 100");
      if (request.before !== "" && request.after !== "")
        throw invalid("after", "cannot be combined with before");
      const page = await store.listMembers(request.accountId, {
        limit: request.limit,
        ...(request.before !== "" ? { before: request.before } : {}),
        ...(request.after !== "" ? { after: request.after } : {}),
        order: request.ascending ? "asc" : "desc",
      });
      return { members: page.items.map(memberToProto), hasMore: page.hasMore };
    },

    async updateMember(request) {
      const role = roleFromProto(request.role);
      const change = {
        ...(request.email !== undefined ? { email: checkEmail(request.email) } : {}),
        ...(request.name !== undefined ? { name: checkMemberName(request.name) } : {}),
        ...(role !== undefined ? { role } : {}),
      };
      const member = isId("member", request.id)
        ? await store.updateMember(request.accountId, request.id, change)
        : null;
      if (!member) throw memberNotFound(request.id);
      logger.info({ accountId: member.accountId, memberId: member.id, role: member.role }, "member changed");
      return { member: memberToProto(member) };
    },

    async deleteMember(request) {
      const deleted = isId("member", request.id) && (await store.deleteMember(request.accountId, request.id));
      if (!deleted) throw memberNotFound(request.id);
      logger.info({ accountId: request.accountId, memberId: request.id }, "member removed");
      return {};
    },

    async findMembersByEmail(request) {
      const email = request.email.trim();
      return { members: email === "" ? [] : (await store.findMembersByEmail(email)).map(memberToProto) };
    },

    async verifyConsoleSession(request) {
      const found = await store.useConsoleSession(request.sessionSha256);
      if (!found?.member || !sessionUsable(found.session, Date.now()))
        throw new AppError("UNAUTHORIZED", INVALID_SESSION);
      return signedInToProto(found);
    },

    async endConsoleSession(request) {
      if (await store.endConsoleSession(request.sessionSha256)) logger.info("console session ended");
      return {};
    },

    async verifyApiKey(request) {
      const found = await store.findApiKeyBySha256(request.secretSha256);
      const usable =
        found !== null &&
        found.key.revokedAt === null &&
        (found.key.expiresAt === null || Date.parse(found.key.expiresAt) > Date.now());
      if (!usable) throw new AppError("UNAUTHORIZED", INVALID_KEY);
      return { apiKey: apiKeyToProto(found.key), account: accountToProto(found.account) };
    },
  };
}
