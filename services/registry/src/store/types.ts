import type { AuditEvent, AuditQuery, Limits, Role, Scope, ScopeGrant, Tier } from "@agentry/core";
import type { BudgetStore } from "./budgets.js";
import type { CreateUnderKey, IdempotencyBegin, IdempotencyClaim, KeyedCreate } from "./idempotency.js";

export type {
  CreateUnderKey,
  IdempotencyBegin,
  IdempotencyClaim,
  KeyedCreate,
  StoredIdempotentResponse,
} from "./idempotency.js";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type AgentStatus = "active" | "inactive" | "error";

/** Why an agent is in `error`: a public error code, a message safe to show, and when it happened (ISO 8601). */
export interface StatusReason {
  code: string;
  message: string;
  at: string;
}

/** What may be shown of an agent's secret: its name and when it was last set, never its value. */
export interface SecretInfo {
  name: string;
  /** ISO 8601 with milliseconds, UTC. */
  updatedAt: string;
}

/** One knowledge entry that matched a search. */
export interface KnowledgeHit {
  /** Its position in the agent's `knowledge`. */
  index: number;
  text: string;
}

/** The fields of an agent that callers write. */
export interface AgentFields {
  name: string;
  bio: string[];
  personality: JsonObject;
  knowledge: string[];
  goals: string[];
  clients: JsonValue[];
  settings: JsonObject;
  modelProvider: string | null;
  model: string | null;
  plugins: JsonValue[];
}

export interface AgentRecord extends AgentFields {
  id: string;
  accountId: string;
  status: AgentStatus;
  statusReason: StatusReason | null;
  /** ISO 8601 with milliseconds, UTC. */
  createdAt: string;
  updatedAt: string;
}

/** A partial update: only the fields present change. `null` model fields reset to the server default. */
export type AgentPatch = Partial<AgentFields> & { status?: "active" | "inactive" };

export type AgentSortField = "createdAt" | "name" | "status";

/**
 * One page of an account's agents. Sorting is ascending or descending on the field, ties broken by id in the same
 * direction; `name` compares by Unicode code point, `status` by the status's name (active < error < inactive).
 */
export interface ListAgentsQuery {
  /** From 1. */
  page: number;
  /** 1 to 100. */
  limit: number;
  status?: AgentStatus;
  sortBy: AgentSortField;
  order: "asc" | "desc";
}

export interface Page<T> {
  items: T[];
  /** Items matching the query over all pages. */
  total: number;
}

export interface AccountRecord {
  id: string;
  name: string;
  tier: Tier;
  limitOverrides: Partial<Limits>;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  /** The scopes the key holds in this version: for a full-access key, every one. */
  scopes: Scope[];
  /** Created without scopes: it holds every scope, including those later versions add. */
  fullAccess: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  /** The member who created it (`usr_…`); null for a key the admin CLI made. */
  createdBy: string | null;
}

export interface NewApiKey {
  accountId: string;
  name: string;
  scopes: ScopeGrant;
  expiresAt: string | null;
  /** Lowercase hex SHA-256 of the secret; the secret itself is never stored. */
  sha256: string;
  prefix: string;
  /** The member creating it; null (or absent) for the admin CLI. */
  createdBy?: string | null;
}

/** A person of an account, who signs in to the console and acts with the scopes of their role. */
export interface MemberRecord {
  /** `usr_` and a ULID. */
  id: string;
  accountId: string;
  /**
   * Lowercase; unique within the account. Null only for the owner made with an account by the admin CLI without
   * `--owner-email`, until one is set.
   */
  email: string | null;
  name: string;
  role: Role;
  createdAt: string;
}

export interface NewMember {
  accountId: string;
  email: string;
  name: string;
  role: Role;
}

/** A change to a member: only the fields present change. */
export interface MemberChange {
  email?: string;
  name?: string;
  role?: Role;
}

/**
 * One page of members by the cursor rules of the other cursor-paged lists: `before` a member id, the members
 * nearest below it; `after`, those nearest above; either way presented in `order` (ids sort by creation).
 */
export interface MembersQuery {
  limit: number;
  before?: string;
  after?: string;
  order: "asc" | "desc";
}

/** A one-time sign-in link of the web console; only its token's SHA-256 is stored. */
export interface ConsoleLinkRecord {
  accountId: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** A signed-in console session; only its secret's SHA-256 is stored. */
export interface ConsoleSessionRecord {
  /** `ses_` and a ULID. */
  id: string;
  accountId: string;
  /** The member it acts for, with the scopes of their role. */
  memberId: string;
  createdAt: string;
  /** The absolute timeout: the session ends then however active it is. */
  expiresAt: string;
  /** The idle timeout: the session ends once this long has passed since `lastSeenAt`. */
  idleTimeoutMs: number;
  lastSeenAt: string;
  endedAt: string | null;
}

export interface NewConsoleSession {
  /**
   * The member it acts for. A sign-in link's session acts for the link's member, or without one for the account's
   * first owner.
   */
  memberId?: string;
  /** Lowercase hex SHA-256 of the session's secret. */
  sha256: string;
  expiresAt: string;
  idleTimeoutMs: number;
}

/**
 * A domain event written in the same transaction as the change it describes (the outbox). Which events a change
 * writes, and what their payloads hold, is in `events.ts`.
 */
export interface OutboxEvent {
  /** Increasing position in the outbox. */
  seq: number;
  /**
   * `evt_` and a ULID, given when the event is written (by an older version that wrote none, when it is first
   * read): the id webhook receivers see, the same however often the event is relayed.
   */
  id: string;
  type: "agent.created" | "agent.updated" | "agent.deleted" | "agent.status_changed";
  accountId: string;
  agentId: string;
  payload: JsonObject;
  createdAt: string;
}

/** An outbox event as a change produces it; the store gives it its position and time when it writes it. */
export type NewOutboxEvent = Pick<OutboxEvent, "id" | "type" | "accountId" | "agentId" | "payload">;

/**
 * The consumers of the outbox. Each keeps its own place in it, so one that is down holds up no other:
 * `conversation` has deleted agents' conversations purged, `webhooks` publishes every event for webhooks.
 */
export type OutboxChannel = "conversation" | "webhooks";

/** Agents, with their secrets and the index of their knowledge. */
export interface AgentStore {
  /**
   * Inserts `newAgent` of `status.ts`. The account's `maxAgents` is checked (`assertAgentQuota`) in the same
   * transaction as the insert, so simultaneous creates never exceed it; over quota throws AppError
   * INSUFFICIENT_QUOTA. An unknown account throws AppError UNAUTHORIZED. With `idempotencyKeyHash`, the key's
   * claimed record is completed in the same transaction (status 201 and the agent's id), when it is still claimed.
   */
  createAgent(
    accountId: string,
    fields: AgentFields,
    options?: { idempotencyKeyHash?: string },
  ): Promise<AgentRecord>;
  /**
   * `createAgent` under an Idempotency-Key claimed in the same transaction (`decideCreate` of `idempotency.ts`):
   * the agent and its key's finished record (`createdRecord`) are stored together or not at all, and of
   * simultaneous creates under one key exactly one creates. A key that has a record answers without creating.
   */
  createAgentUnderKey(
    accountId: string,
    fields: AgentFields,
    key: CreateUnderKey,
  ): Promise<KeyedCreate<AgentRecord>>;
  /**
   * The agent as stored. A store may hand every read of one version the same record from a cache of its own,
   * frozen: a caller treats what it reads as read-only.
   */
  getAgent(accountId: string, id: string): Promise<AgentRecord | null>;
  /** A page of agents, each as `getAgent` reads it, and the total, from one snapshot. */
  listAgents(accountId: string, query: ListAgentsQuery): Promise<Page<AgentRecord>>;
  /**
   * Applies the patch with `applyAgentPatch` inside one transaction; null when the agent does not exist. With
   * `expectedUpdatedAt`, only if the agent still has that `updatedAt` (`assertVersion`, in the same transaction).
   */
  updateAgent(
    accountId: string,
    id: string,
    patch: AgentPatch,
    expectedUpdatedAt?: string,
  ): Promise<AgentRecord | null>;
  /**
   * Applies a provider failure (or, null, a success) with `applyHealthReport` inside one transaction; null when
   * the agent does not exist, the record unchanged when the report changes nothing.
   */
  reportAgentHealth(accountId: string, id: string, failure: StatusReason | null): Promise<AgentRecord | null>;
  /**
   * Removes the agent and everything that belongs to it in one transaction; false when it did not exist. With
   * `expectedUpdatedAt`, only if the agent still has that `updatedAt` (`assertVersion`, in the same transaction).
   */
  deleteAgent(accountId: string, id: string, expectedUpdatedAt?: string): Promise<boolean>;

  /**
   * Sets one secret of an agent to its sealed form (`SecretVault`; the store never sees a value), replacing any.
   * Null when the account has no such agent. An agent's secrets go with it when it is deleted.
   */
  putAgentSecret(
    accountId: string,
    agentId: string,
    name: string,
    sealed: string,
  ): Promise<SecretInfo | null>;
  /** The agent's secrets, sorted by name; null when the account has no such agent. */
  listAgentSecrets(accountId: string, agentId: string): Promise<SecretInfo[] | null>;
  /** Removes one secret; false when the agent has none of that name, null when the account has no such agent. */
  deleteAgentSecret(accountId: string, agentId: string, name: string): Promise<boolean | null>;
  /** The sealed forms of the agent's secrets with these names, by name (a name not set is absent); null as above. */
  sealedAgentSecrets(
    accountId: string,
    agentId: string,
    names: readonly string[],
  ): Promise<Record<string, string> | null>;

  /**
   * The agent's knowledge entries holding any of the words (`searchWords` of `knowledge.ts`), best first, ties in
   * knowledge order; null when the account has no such agent. The index is kept in step with `knowledge` in the
   * transaction of every create, update and delete.
   */
  searchKnowledge(
    accountId: string,
    agentId: string,
    words: readonly string[],
    limit: number,
  ): Promise<KnowledgeHit[] | null>;
}

/** Accounts and their API keys. */
export interface AccountStore {
  /**
   * Creates the account and, in the same transaction, its first member: an owner named `owner.name` ("Owner" by
   * default) with `owner.email` (or none). Throws AppError INVALID_REQUEST when the name is taken.
   */
  createAccount(input: {
    name: string;
    tier: Tier;
    limitOverrides: Partial<Limits>;
    owner?: { email?: string; name?: string };
  }): Promise<AccountRecord>;
  getAccount(id: string): Promise<AccountRecord | null>;
  /**
   * Changes an account's plan: its tier and/or its limit overrides (replaced whole). Null when the account does
   * not exist. Gateways pick the change up when they next verify the account's keys, with no restart.
   */
  updateAccount(
    id: string,
    change: { tier?: Tier; limitOverrides?: Partial<Limits> },
  ): Promise<AccountRecord | null>;
  getAccountByName(name: string): Promise<AccountRecord | null>;
  /** Oldest first. */
  listAccounts(): Promise<AccountRecord[]>;

  /** Throws AppError NOT_FOUND when the account does not exist. */
  createApiKey(input: NewApiKey): Promise<ApiKeyRecord>;
  /**
   * `createApiKey` under an Idempotency-Key claimed in the same transaction, as `createAgentUnderKey`; `secret` is
   * the new key's secret sealed by the caller, kept with the key's record. A replay answers the API key as it was
   * created (`apiKeyAsCreated`) and the sealed secret kept with it.
   */
  createApiKeyUnderKey(
    input: NewApiKey,
    key: CreateUnderKey & { secret: Uint8Array },
  ): Promise<KeyedCreate<{ apiKey: ApiKeyRecord; secret: Uint8Array }>>;
  /** Oldest first, revoked keys included. */
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Sets revokedAt (once; revoking again keeps the first time). With accountId, only that account's key. */
  revokeApiKey(id: string, accountId?: string): Promise<ApiKeyRecord | null>;
  /** The key with this SHA-256 and its account, whatever its state; callers check revocation and expiry. */
  findApiKeyBySha256(sha256: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | null>;
  /** Records last use times in one write; later times win. */
  touchApiKeys(lastUsed: ReadonlyMap<string, string>): Promise<void>;
}

/**
 * The members of accounts. An account always keeps at least one owner: a change or removal that would leave it
 * none throws AppError LAST_OWNER, checked in the change's transaction so simultaneous ones cannot both pass.
 */
export interface MemberStore {
  /**
   * Throws AppError MEMBER_EXISTS when the account has a member with this email, NOT_FOUND when the account does
   * not exist.
   */
  createMember(input: NewMember): Promise<MemberRecord>;
  /** Null when the account has no such member. */
  getMember(accountId: string, id: string): Promise<MemberRecord | null>;
  listMembers(accountId: string, query: MembersQuery): Promise<{ items: MemberRecord[]; hasMore: boolean }>;
  /** Null when the account has no such member; MEMBER_EXISTS for an email another member has. */
  updateMember(accountId: string, id: string, change: MemberChange): Promise<MemberRecord | null>;
  /** False when the account has no such member. Their console sessions end with them. */
  deleteMember(accountId: string, id: string): Promise<boolean>;
  /** Every member with this email (compared in lowercase), across accounts, oldest first. */
  findMembersByEmail(email: string): Promise<MemberRecord[]>;
}

/** A console session with its account and the member it acts for (null once they are removed). */
export interface SignedIn {
  session: ConsoleSessionRecord;
  account: AccountRecord;
  member: MemberRecord | null;
}

/** Console sign-in links and the sessions they open. */
export interface ConsoleSessionStore {
  /** Stores a sign-in link by its token's SHA-256. Throws AppError NOT_FOUND when the account does not exist. */
  createConsoleLink(input: {
    accountId: string;
    sha256: string;
    expiresAt: string;
    /** The member the session will act for; without one, the account's first owner. */
    memberId?: string;
  }): Promise<void>;
  /**
   * In one transaction: when the link is redeemable (`linkRedeemable` of `console-sessions.ts`), marks it used and
   * creates the session. Null when the link is unknown, used or expired, so of simultaneous redemptions one wins.
   */
  redeemConsoleLink(linkSha256: string, session: NewConsoleSession): Promise<SignedIn | null>;
  /**
   * Opens a session for a member signed in another way (OIDC). Null when the account has no such member.
   */
  openConsoleSession(
    accountId: string,
    memberId: string,
    session: NewConsoleSession,
  ): Promise<SignedIn | null>;
  /**
   * The session with this SHA-256 and its account, with the use recorded (`lastSeenAt` set to now) when it is
   * usable (`sessionUsable`); an unusable one is returned as it was, and callers refuse it.
   */
  useConsoleSession(sha256: string): Promise<SignedIn | null>;
  /** Signs the session out (once; ending again keeps the first time). False when there is no such session. */
  endConsoleSession(sha256: string): Promise<boolean>;
  /**
   * Removes up to `limit` sign-in links past their expiry and up to `limit` sessions past their absolute expiry or
   * signed out; how many it removed. (Reads already refuse them; this only keeps the tables small.)
   */
  deleteExpiredConsoleSessions(limit: number): Promise<number>;
}

/** The outbox of agent events, read by each channel's consumer. */
export interface OutboxStore {
  /** Outbox events the channel's consumer has not yet been given, oldest first. */
  unpublishedEvents(channel: OutboxChannel, limit: number): Promise<OutboxEvent[]>;
  /** Records that the channel's consumer has these events; the other channel's progress is its own. */
  markEventsPublished(channel: OutboxChannel, seqs: number[]): Promise<void>;
}

/** Idempotency-Keys of REST requests. */
export interface IdempotencyStore {
  /**
   * Claims an Idempotency-Key for a request, in one transaction with the record's read (`decideClaim` of
   * `idempotency.ts`), so that of simultaneous claims exactly one starts.
   */
  beginIdempotentRequest(claim: IdempotencyClaim): Promise<IdempotencyBegin>;
  /** Stores the response of a claimed key; does nothing when the key is no longer claimed. */
  completeIdempotentRequest(
    accountId: string,
    keyHash: string,
    response: { status: number; sealed: Uint8Array },
  ): Promise<void>;
  /** Removes a claimed key's record, so that the request may run again; a stored response stays. */
  releaseIdempotentRequest(accountId: string, keyHash: string): Promise<void>;
  /** Removes up to `limit` records whose 24 hours are over; how many it removed. */
  deleteExpiredIdempotencyKeys(limit: number): Promise<number>;
}

/**
 * Everything the registry stores, one interface per aggregate. Implementations: SQLite (embedded default) and
 * Postgres, each a file per aggregate composed into one store; both pass the one contract suite,
 * `registryStoreContract` of `@agentry/registry/testing`.
 *
 * Every agent operation is scoped to an account: another account's agent is reported exactly like a missing one
 * (null / false). Mutations write their outbox event, and their audit event (with the stamp of the call they
 * serve, `currentAuditStamp`), in the same transaction.
 */
export interface AuditStore {
  /** A page of the account's audit events the registry recorded, in the query's order (docs/api/audit.md). */
  listAuditEvents(accountId: string, query: AuditQuery): Promise<{ items: AuditEvent[]; hasMore: boolean }>;
  /** Removes up to `limit` events recorded before `before` (ISO-8601); how many it removed. */
  pruneAuditEvents(before: string, limit: number): Promise<number>;
}

export interface RegistryStore
  extends AgentStore,
    AuditStore,
    AccountStore,
    MemberStore,
    ConsoleSessionStore,
    OutboxStore,
    IdempotencyStore,
    BudgetStore {
  /** Flushes and closes; the store is unusable afterwards. Closing again does nothing. */
  close(): Promise<void>;
}
