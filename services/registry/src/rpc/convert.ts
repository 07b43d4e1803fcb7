import {
  effectiveLimits,
  isSha256Hex,
  LIMIT_NAMES,
  type Limits,
  PAGE_LIMIT,
  type Role,
  type Tier,
} from "@agentry/core";
import { invalid } from "@agentry/errors";
import {
  type Account,
  AccountSchema,
  type Agent,
  AgentSchema,
  AgentSortField,
  type AgentSpec,
  AgentSpecSchema,
  AgentStatus,
  type ApiKey,
  ApiKeySchema,
  type ConsoleSession,
  ConsoleSessionSchema,
  type Limits as LimitsMessage,
  LimitsSchema,
  type Member,
  MemberSchema,
  Role as RoleEnum,
  SortOrder,
  type StatusReason as StatusReasonMessage,
  StatusReasonSchema,
  Tier as TierEnum,
} from "@agentry/proto";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import {
  type Timestamp,
  timestampDate,
  timestampFromDate,
  type Value,
  ValueSchema,
} from "@bufbuild/protobuf/wkt";
import type {
  AccountRecord,
  AgentFields,
  AgentRecord,
  ApiKeyRecord,
  ConsoleSessionRecord,
  JsonValue,
  ListAgentsQuery,
  MemberRecord,
  AgentSortField as SortField,
  AgentStatus as Status,
  StatusReason,
} from "../store/types.js";

// Timestamps

export function toTimestamp(iso: string): Timestamp {
  return timestampFromDate(new Date(iso));
}

export function fromTimestamp(timestamp: Timestamp): string {
  return timestampDate(timestamp).toISOString();
}

function optionalTimestamp(iso: string | null): Timestamp | undefined {
  return iso === null ? undefined : toTimestamp(iso);
}

// Enums

const STATUS_TO_PROTO: Record<Status, AgentStatus> = {
  active: AgentStatus.ACTIVE,
  inactive: AgentStatus.INACTIVE,
  error: AgentStatus.ERROR,
};

export function statusToProto(status: Status): AgentStatus {
  return STATUS_TO_PROTO[status];
}

/** The status of a proto enum value; undefined for UNSPECIFIED and for values this build does not know. */
export function statusFromProto(status: AgentStatus): Status | undefined {
  switch (status) {
    case AgentStatus.ACTIVE:
      return "active";
    case AgentStatus.INACTIVE:
      return "inactive";
    case AgentStatus.ERROR:
      return "error";
    default:
      return undefined;
  }
}

const TIER_TO_PROTO: Record<Tier, TierEnum> = {
  standard: TierEnum.STANDARD,
  pro: TierEnum.PRO,
  enterprise: TierEnum.ENTERPRISE,
};

export function tierToProto(tier: Tier): TierEnum {
  return TIER_TO_PROTO[tier];
}

/** UNSPECIFIED means standard, as the proto documents; an unknown value is refused. */
export function tierFromProto(tier: TierEnum): Tier {
  switch (tier) {
    case TierEnum.UNSPECIFIED:
    case TierEnum.STANDARD:
      return "standard";
    case TierEnum.PRO:
      return "pro";
    case TierEnum.ENTERPRISE:
      return "enterprise";
    default:
      throw invalid("tier", `unknown tier ${tier}`);
  }
}

const SORT_FIELDS: Record<AgentSortField, SortField | undefined> = {
  [AgentSortField.UNSPECIFIED]: "createdAt",
  [AgentSortField.CREATE_TIME]: "createdAt",
  [AgentSortField.NAME]: "name",
  [AgentSortField.STATUS]: "status",
};

const SORT_ORDERS: Record<SortOrder, ListAgentsQuery["order"] | undefined> = {
  [SortOrder.UNSPECIFIED]: "desc",
  [SortOrder.ASC]: "asc",
  [SortOrder.DESC]: "desc",
};

export const DEFAULT_PAGE_SIZE = PAGE_LIMIT.default;
export const MAX_PAGE_SIZE = PAGE_LIMIT.max;

/** A list query from its request; zero page and page size mean the defaults (page 1, 20 items). */
export function listQueryFromProto(request: {
  page: number;
  pageSize: number;
  status: AgentStatus;
  sortBy: AgentSortField;
  order: SortOrder;
}): ListAgentsQuery {
  const page = request.page === 0 ? 1 : request.page;
  const limit = request.pageSize === 0 ? DEFAULT_PAGE_SIZE : request.pageSize;
  if (page < 1) throw invalid("page", "must be 1 or more");
  if (limit < 1 || limit > MAX_PAGE_SIZE)
    throw invalid("page_size", `must be between 1 and ${MAX_PAGE_SIZE}`);
  const sortBy = SORT_FIELDS[request.sortBy];
  if (!sortBy) throw invalid("sort_by", `unknown sort field ${request.sortBy}`);
  const order = SORT_ORDERS[request.order];
  if (!order) throw invalid("order", `unknown sort order ${request.order}`);
  const query: ListAgentsQuery = { page, limit, sortBy, order };
  if (request.status !== AgentStatus.UNSPECIFIED) {
    const status = statusFromProto(request.status);
    if (!status) throw invalid("status", `unknown status ${request.status}`);
    query.status = status;
  }
  return query;
}

// Agents

function jsonArrayToValue(items: JsonValue[]): Value {
  return fromJson(ValueSchema, items);
}

/** A JSON array carried in a `google.protobuf.Value`; absent (or holding nothing) means empty. */
export function jsonArrayFromValue(value: Value | undefined, field: string): JsonValue[] {
  if (!value || value.kind.case === undefined) return [];
  const json = toJson(ValueSchema, value);
  if (!Array.isArray(json)) throw invalid(field, "must be a JSON array");
  return json;
}

export function specToProto(fields: AgentFields): AgentSpec {
  return create(AgentSpecSchema, {
    name: fields.name,
    bio: fields.bio,
    personality: fields.personality,
    knowledge: fields.knowledge,
    goals: fields.goals,
    clients: jsonArrayToValue(fields.clients),
    settings: fields.settings,
    modelProvider: fields.modelProvider ?? undefined,
    model: fields.model ?? undefined,
    plugins: jsonArrayToValue(fields.plugins),
  });
}

export function statusReasonToProto(reason: StatusReason): StatusReasonMessage {
  return create(StatusReasonSchema, {
    code: reason.code,
    message: reason.message,
    time: toTimestamp(reason.at),
  });
}

/** A reason from its message; a missing time means now. */
export function statusReasonFromProto(reason: StatusReasonMessage): StatusReason {
  return {
    code: reason.code,
    message: reason.message,
    at: reason.time ? fromTimestamp(reason.time) : new Date().toISOString(),
  };
}

export function agentToProto(agent: AgentRecord): Agent {
  return create(AgentSchema, {
    id: agent.id,
    accountId: agent.accountId,
    spec: specToProto(agent),
    status: statusToProto(agent.status),
    statusReason: agent.statusReason ? statusReasonToProto(agent.statusReason) : undefined,
    createTime: toTimestamp(agent.createdAt),
    updateTime: toTimestamp(agent.updatedAt),
  });
}

// Accounts and keys

export function limitsToProto(limits: Partial<Limits>): LimitsMessage {
  return create(LimitsSchema, limits);
}

/** The limits set in a message; unset fields are left out. */
export function limitsFromProto(message: LimitsMessage | undefined): Partial<Limits> {
  const limits: Partial<Limits> = {};
  if (!message) return limits;
  for (const name of LIMIT_NAMES) {
    const value = message[name];
    if (value !== undefined) limits[name] = value;
  }
  return limits;
}

export function accountToProto(account: AccountRecord): Account {
  return create(AccountSchema, {
    id: account.id,
    name: account.name,
    tier: tierToProto(account.tier),
    limitOverrides: limitsToProto(account.limitOverrides),
    limits: limitsToProto(effectiveLimits(account.tier, account.limitOverrides)),
    createTime: toTimestamp(account.createdAt),
  });
}

export function apiKeyToProto(key: ApiKeyRecord): ApiKey {
  return create(ApiKeySchema, {
    id: key.id,
    accountId: key.accountId,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    fullAccess: key.fullAccess,
    createTime: toTimestamp(key.createdAt),
    lastUsedTime: optionalTimestamp(key.lastUsedAt),
    expireTime: optionalTimestamp(key.expiresAt),
    revokeTime: optionalTimestamp(key.revokedAt),
    createdBy: key.createdBy ?? "",
  });
}

const ROLE_TO_PROTO: Record<Role, RoleEnum> = {
  owner: RoleEnum.OWNER,
  admin: RoleEnum.ADMIN,
  developer: RoleEnum.DEVELOPER,
  viewer: RoleEnum.VIEWER,
};

export function roleToProto(role: Role): RoleEnum {
  return ROLE_TO_PROTO[role];
}

/** A role; undefined for UNSPECIFIED (callers decide whether one is required). */
export function roleFromProto(role: RoleEnum): Role | undefined {
  const found = (Object.keys(ROLE_TO_PROTO) as Role[]).find((name) => ROLE_TO_PROTO[name] === role);
  if (found === undefined && role !== RoleEnum.UNSPECIFIED) throw invalid("role", "is not a known role");
  return found;
}

export function memberToProto(member: MemberRecord): Member {
  return create(MemberSchema, {
    id: member.id,
    accountId: member.accountId,
    email: member.email ?? "",
    name: member.name,
    role: roleToProto(member.role),
    createTime: toTimestamp(member.createdAt),
  });
}

export function consoleSessionToProto(session: ConsoleSessionRecord): ConsoleSession {
  return create(ConsoleSessionSchema, {
    id: session.id,
    accountId: session.accountId,
    createTime: toTimestamp(session.createdAt),
    expireTime: toTimestamp(session.expiresAt),
    idleTimeoutSeconds: Math.floor(session.idleTimeoutMs / 1000),
    lastSeenTime: toTimestamp(session.lastSeenAt),
    memberId: session.memberId,
  });
}

/** `value`, when it is a SHA-256 in lowercase hex; INVALID_REQUEST naming `field` otherwise. */
export function checkSha256(field: string, value: string): string {
  if (!isSha256Hex(value)) throw invalid(field, "must be a lowercase hex SHA-256");
  return value;
}
