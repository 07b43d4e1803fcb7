import type { AuditEvent, AuditQuery, ConflictMode } from "@agentry/core";
import type { JsonObject } from "@agentry/events";
import type { ToolCallRecord } from "../tools.js";
import type { UsageReport, UsageRequest } from "../usage.js";

/**
 * A conversation is identified by (agent, userId, roomId) within an account (docs/api/messages-and-streams.md, "Conversations and context"). A
 * message without a userId or roomId belongs to the default value of that part, the empty string, so messages
 * without them share one default conversation.
 */
export interface ConversationKey {
  accountId: string;
  agentId: string;
  userId: string;
  roomId: string;
}

export type TurnRole = "user" | "assistant";

/** A conversation as its history lists it. */
export interface ConversationRecord extends ConversationKey {
  /** "conv_" + ULID, given when its first exchange is stored and kept for its life. */
  id: string;
  /** Messages of both roles. */
  messageCount: number;
  /** ISO 8601 with milliseconds, UTC: when its first message arrived. */
  createdAt: string;
  /** When its latest reply was stored. */
  lastMessageAt: string;
}

/** One stored message. Model, provider, tokens and latency describe the call behind an assistant turn. */
export interface TurnRecord extends ConversationKey {
  /** "msg_" + ULID; an assistant turn has the id of the reply it stores. */
  id: string;
  /** The conversation it belongs to. */
  conversationId: string;
  role: TurnRole;
  text: string;
  /** Null for user turns. */
  model: string | null;
  provider: string | null;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  /** Why generation stopped, for assistant turns; null for user turns and for replies stored before it was kept. */
  finishReason: string | null;
  /** The tools called while writing an assistant turn, with their outcomes; empty for user turns and for none. */
  toolCalls: ToolCallRecord[];
  /** The chunks of the agent's documents an assistant turn's prompt carried; empty for user turns and for none. */
  citations: CitationRecord[];
  /**
   * Whether the turn is the reply of a message sent in the background, which is read by id in that form for as long
   * as it is stored (message-runs.ts); false for user turns.
   */
  background: boolean;
  /** Whether a fallback model wrote the reply; false for user turns and for replies stored before it was kept. */
  fallback: boolean;
  /** ISO 8601 with milliseconds, UTC: when the message arrived, or when the reply was complete. */
  createdAt: string;
}

/** A stored turn as a prompt uses it. */
export interface HistoryTurn {
  role: TurnRole;
  text: string;
}

/** How much of a conversation's history one prompt can use. */
export interface HistoryLimits {
  /** The most turns to read. */
  maxTurns: number;
  /** Estimated tokens the turns may take together, each `turnTokens(text)` of history.ts. */
  tokenBudget: number;
}

/** A message and its complete reply, stored together or not at all. */
export interface NewExchange {
  key: ConversationKey;
  user: { id: string; text: string; createdAt: string };
  reply: {
    id: string;
    text: string;
    model: string;
    provider: string;
    inputTokens: number;
    outputTokens: number;
    latencyMs: number;
    finishReason: string;
    createdAt: string;
    /** Unset or empty when the model called no tool. */
    toolCalls?: ToolCallRecord[];
    /** Unset or empty when the prompt carried no chunk of the agent's documents. */
    citations?: CitationRecord[];
    /** Whether the message was sent in the background; unset: it was not. */
    background?: boolean;
    /** Whether a fallback model wrote the reply; unset: it did not. */
    fallback?: boolean;
  };
  /**
   * The Idempotency-Key the message was sent with, kept with the exchange until `expiresAt` so that the message
   * sent again with it is answered with this reply (idempotent-sends.ts). `fallback`: whether a fallback model
   * answered, which the stored turns do not say. A key another exchange of the account holds, unexpired, is left to it.
   */
  idempotencyKey?: { hash: string; fallback: boolean; expiresAt: string };
  /**
   * The message's place in its conversation's line (`QueueEntry` id and owner), left in the transaction that
   * stores the exchange, as `leaveConversation` leaves it: the next message is admitted with the reply on disk.
   */
  leaves?: { id: string; owner: string };
}

/** The exchange an Idempotency-Key of an account was stored with. */
export interface KeyedExchange {
  agentId: string;
  /** The ids of the message and of its reply. */
  messageId: string;
  replyId: string;
  fallback: boolean;
}

/** `completed`: a reply was stored. `failed`: an error was returned. `cancelled`: the caller went away first. */
export type CallOutcome = "completed" | "failed" | "cancelled";

/** The metrics and log record of one model call, whatever its outcome; the source of later analytics. */
export interface CallRecord extends ConversationKey {
  /** The id the reply has or would have had. */
  id: string;
  /** The public request id, for correlation with the gateway's logs. */
  requestId: string | null;
  /** The API key the message was sent with, for usage by key; null when the caller named none. */
  apiKeyId: string | null;
  /** Null when the call failed before a provider was chosen. */
  provider: string | null;
  model: string | null;
  stream: boolean;
  outcome: CallOutcome;
  /** The public error code of a failed call. */
  errorCode: string | null;
  /** The message returned with that error (safe to show, never a secret). */
  errorMessage: string | null;
  /** From receiving the message to the reply or the failure. */
  latencyMs: number;
  /**
   * From receiving the message to the reply's first text (for a reply not streamed, to its arrival); null when
   * no text came.
   */
  firstTokenMs: number | null;
  inputTokens: number;
  outputTokens: number;
  createdAt: string;
}

export interface TurnPage {
  turns: TurnRecord[];
  /** Opaque position after the page's last turn; null on the last page. */
  nextCursor: string | null;
}

/**
 * One page of a history collection (docs/api/lists-and-pagination.md, "Cursor pagination"): `before` (an item's id) asks for the items
 * nearest below it, `after` for those nearest above it, neither for the newest (`desc`) or oldest (`asc`) end;
 * the page is presented in `order` either way. A cursor that is not an item of the collection throws AppError
 * INVALID_REQUEST.
 */
export interface PageRequest {
  limit: number;
  before: string | null;
  after: string | null;
  order: "asc" | "desc";
}

export interface Page<T> {
  items: T[];
  /** Whether more items lie beyond the page, in the direction of paging. */
  hasMore: boolean;
}

/**
 * Which of an agent's messages to list. They combine: `userId` alone is that user's messages in every room,
 * `roomId` alone every user's in that room, both one conversation; `conversationId` one conversation.
 */
export interface MessageFilter {
  conversationId?: string;
  userId?: string;
  roomId?: string;
}

/** The events the conversation service publishes for webhooks (docs/api/webhooks.md, "Events"). */
export type MessageEventType = "message.completed" | "message.failed" | "message.requires_action";

/**
 * An event for the outbox, written in the transaction that stores what it tells of (events.ts makes them): its
 * public `evt_` id, and its `data` as receivers get it.
 */
export interface NewOutboxEvent {
  id: string;
  type: MessageEventType;
  accountId: string;
  agentId: string;
  /** ISO 8601 with milliseconds, UTC: when it happened. */
  createdAt: string;
  data: JsonObject;
}

/** An outbox event as the store holds it until it has been published. */
export interface OutboxEvent extends NewOutboxEvent {
  /** Its place in the outbox: events are written, and published, in this order. */
  seq: number;
}

/** Where a message with an event log stands (message-runs.ts): its reply is being generated, stored, or failed. */
export type RunStatus = "pending" | "completed" | "failed";

/**
 * A run's status as ListRuns shows it: a failed run the kill switch ended (`cancelAgentRuns`) is `cancelled`, a
 * pending one paused for a person's approval (`approval` set) `requires_action`.
 */
export type ListedRunStatus = RunStatus | "cancelled" | "requires_action";

/**
 * The log of one streamed or background message (message-runs.ts), or the record of a JSON send with an
 * Idempotency-Key: its state, and (apart) its numbered events. Its events are kept until `expiresAt` and the record until
 * `keptUntil`, both set when it ends; a pending run past `deadlineAt` was abandoned by a process that stopped.
 */
export interface RunRecord {
  /** The reply's id. */
  id: string;
  accountId: string;
  agentId: string;
  /** Echoed as the message gave them; null when it had none. */
  userId: string | null;
  roomId: string | null;
  /** Whether it was sent in the background (then its state is read by id, besides its events). */
  background: boolean;
  /**
   * Whether it keeps an event log: a stream's or a background message's does; a JSON send's (one sent with an
   * Idempotency-Key, idempotent-sends.ts) is only its record, so that the message sent again to another process
   * finds it.
   */
  logged: boolean;
  /**
   * The Idempotency-Key it was sent with (idempotent-sends.ts): the key's SHA-256 hex, and `request`, the SHA-256
   * hex of what makes it the same message for that key; null when it was sent without one.
   */
  idempotencyKey: { hash: string; request: string } | null;
  status: RunStatus;
  /** The public error of a failed run. */
  errorCode: string | null;
  errorMessage: string | null;
  /** The data of its terminal event (run-records.ts), once ended. */
  result: string | null;
  /** ISO 8601 with milliseconds, UTC. */
  createdAt: string;
  /** When a run still pending is known to have been abandoned. */
  deadlineAt: string;
  /** When it ended; null while pending. */
  endedAt: string | null;
  /** When its events are forgotten; null while pending. */
  expiresAt: string | null;
  /** When the record itself is forgotten (with its events, if still there): `expiresAt` or later; null while pending. */
  keptUntil: string | null;
  /**
   * A background message's lease (message-runs.ts, "Durable runs"): the process generating it (`holder`) and until
   * when it holds it unless it renews it; null for other runs.
   */
  lease?: { holder: string; expiresAt: string } | null;
  /** A background message as another process needs it to generate it again (message-runs.ts), JSON; else null. */
  input?: string | null;
  /** How many times another process took the run over. */
  takeovers?: number;
  /** Whether the kill switch ended it (`cancelAgentRuns`). */
  cancelled?: boolean;
  /**
   * While it waits for a person's approval (message-runs.ts, "Tool approvals"): the calls to decide on, JSON
   * `[{id, tool, arguments}]`, and when the wait ends; null otherwise.
   */
  approval?: { pendingToolCalls: string; expiresAt: string } | null;
  /** The person's answers so far, JSON `{[callId]: {approve, reason?}}`; null before any. */
  decisions?: string | null;
}

/** How a run pauses for a person's approval (`RunWrite` "pause"). */
export interface RunPause {
  /** The calls to decide on, JSON `[{id, tool, arguments}]`. */
  pendingToolCalls: string;
  /** When the wait ends (the message then fails). */
  expiresAt: string;
  /** When the run counts as abandoned if nothing ended it: past `expiresAt`. */
  deadlineAt: string;
  /** The message as a process resuming it needs it (as a background message's `input`). */
  input: string;
  /** The lease holder pausing it, when leased: only while it holds the lease. */
  holder?: string | undefined;
  /** Its `message.requires_action` event, written with the pause. */
  events: readonly NewOutboxEvent[];
  /**
   * The tokens the turn spent since it began or last paused, added to the usage rollups with the pause (as
   * `recordTokens` adds them), so that they are counted once however the message goes on.
   */
  tokens?: CallRecord | undefined;
}

/** A paused run whose wait for approval has ended, as `expiredApprovals` finds it. */
export type ExpiredApproval = Pick<
  RunRecord,
  "id" | "background" | "accountId" | "agentId" | "userId" | "roomId"
>;

/** A person's answers recorded on a paused run (`decideRun`). */
export interface RunDecision {
  /** The run's decisions as read before: the update happens only if they are still these (null: none). */
  expected: string | null;
  /** All its decisions now, JSON. */
  decisions: string;
  /** Given once every pending call is decided: the run resumes, leased by `holder` until `expiresAt`. */
  resume: { holder: string; expiresAt: string; deadlineAt: string } | null;
}

/** A background run whose lease has expired, as the scan for runs to take over finds it. */
export interface ExpiredLease {
  id: string;
  accountId: string;
  agentId: string;
}

/** One event of a run's log. `data` is the event's JSON text (run-records.ts says what each type holds). */
export interface RunEvent {
  /** From 1, without gaps. */
  seq: number;
  type: "started" | "delta" | "tool.call" | "tool.result" | "approval_required" | "completed" | "failed";
  data: string;
}

/** How a run ended. */
export interface RunEnd {
  status: Exclude<RunStatus, "pending">;
  errorCode: string | null;
  errorMessage: string | null;
  result: string | null;
  endedAt: string;
  expiresAt: string;
  keptUntil: string;
  /**
   * A leased run's holder ending it: it ends only while that process holds its lease, so that a process paused
   * past its lease (the run taken over meanwhile) does not end the run its taker is generating.
   */
  holder?: string | undefined;
  /** Ended by a cancel (the kill switch, or a later message that interrupted it), not by a failure of its own. */
  cancelled?: boolean | undefined;
  /** Message events written with the end, only if it ends the run (a paused run's `message.failed` at expiry). */
  events?: readonly NewOutboxEvent[] | undefined;
}

/** One write of a message log, as the service batches them (message-runs.ts). */
export type RunWrite =
  | { kind: "start"; run: RunRecord }
  | { kind: "events"; runId: string; events: readonly RunEvent[] }
  | { kind: "end"; runId: string; events: readonly RunEvent[]; end: RunEnd }
  /** The run stays pending, without a lease, its log ending in `approval_required`, until a person decides. */
  | { kind: "pause"; runId: string; events: readonly RunEvent[]; pause: RunPause };

/** A fact an agent keeps about one of its users (docs/api/memories.md). */
export interface MemoryRecord {
  /** "mem_" + ULID. */
  id: string;
  accountId: string;
  agentId: string;
  userId: string;
  text: string;
  /** The message it was learnt from; null when it was added by hand. */
  sourceMessageId: string | null;
  /** ISO 8601 with milliseconds, UTC. */
  createdAt: string;
}

/** A vector of some text by one embedding model, unit length (embeddings.ts). */
export interface MemoryVector {
  model: string;
  vector: Float32Array;
}

/** Whose memories: one user of one agent. */
export interface MemoryOwner {
  accountId: string;
  agentId: string;
  userId: string;
}

/** A memory to store: its text, already bounded, and `key`, the text normalised (memories.ts) for deduplication. */
export interface NewMemory {
  id: string;
  text: string;
  key: string;
  sourceMessageId: string | null;
  createdAt: string;
}

/** Which of an agent's memories to list: one user's, and those matching a full-text query. */
export interface MemoryFilter {
  userId?: string;
  /** Words to match (memories.ts `searchTerms` makes the query safe for either store). */
  query?: string;
}

/** A chunk of an agent's document that a reply's prompt carried, and how well it matched (0 to 1, the best 1). */
export interface CitationRecord {
  documentId: string;
  chunk: number;
  score: number;
}

/** A file an agent answers from (docs/api/documents.md), without its text. */
export interface DocumentRecord {
  /** "doc_" + ULID. */
  id: string;
  accountId: string;
  agentId: string;
  title: string;
  contentType: string;
  sizeBytes: number;
  /** Characters of text extracted from it. */
  textLength: number;
  /** How many chunks it was cut into. */
  chunkCount: number;
  /** The character's knowledge reference it answers; empty when none. */
  source: string;
  /** ISO 8601 with milliseconds, UTC. */
  createdAt: string;
}

/** A document to store: its text already cut into chunks (documents.ts), in order. */
export interface NewDocument {
  id: string;
  title: string;
  contentType: string;
  sizeBytes: number;
  textLength: number;
  source: string;
  chunks: string[];
  createdAt: string;
}

/**
 * A chunk that matched a search: its document and position, its text, and its score, above 0 and higher for
 * better matches (the store's own full-text rank; documents.ts makes it relative to the best).
 */
export interface ChunkMatch {
  documentId: string;
  title: string;
  chunk: number;
  text: string;
  score: number;
}

export interface PurgeResult {
  turns: number;
  calls: number;
}

/**
 * Everything the conversation service stores. Implementations: SQLite (embedded default) and Postgres;
 * both pass the one contract suite, `conversationStoreContract` of `@agentry/conversation/testing`.
 *
 * Turns are ordered by the time their exchange was stored (a message and its reply are adjacent). Reads are
 * scoped to the full key, account included: nothing crosses accounts, agents, users or rooms.
 */
/** A schedule of an agent as stored: when it fires next, and how its last fire went (schedules.ts). */
export interface ScheduleRecord {
  id: string;
  accountId: string;
  agentId: string;
  cron: string;
  timezone: string;
  text: string;
  userId: string | null;
  roomId: string | null;
  enabled: boolean;
  /** The next fire time still to be claimed; null while disabled, or when the expression has no next time. */
  nextFireAt: string | null;
  /** Fires not run because everything was down past them (more than the catch-up window late). */
  skippedFires: number;
  lastFire: LastFire | null;
  createdAt: string;
  updatedAt: string;
}

/** A schedule's last fire: the time it was due and the background message it started. */
export interface LastFire {
  scheduledAt: string;
  firedAt: string;
  /** The reply's id of the background message; null when the fire started none (`error` says why). */
  messageId: string | null;
  error: { code: string; message: string } | null;
}

/** What a PATCH of a schedule changes; `nextFireAt` is computed by the caller from the result. */
export type SchedulePatch = Partial<
  Pick<ScheduleRecord, "cron" | "timezone" | "text" | "userId" | "roomId" | "enabled" | "nextFireAt">
> & { updatedAt: string };

/** One fire claimed by a process: the schedule advanced past `scheduledAt`, and the fire's row written. */
export interface FireClaim {
  scheduleId: string;
  /** The fire time the claimer read (the schedule's `nextFireAt`): the claim holds only while it still is. */
  scheduledAt: string;
  /** The schedule's next fire time after this one. */
  nextFireAt: string | null;
  /** Fires counted as skipped with this claim (`scheduledAt` among them when `fire` is null). */
  skipped: number;
  /** The fire to record (its own `scheduledAt`, the latest time due); null when no fire is run. */
  fire: ClaimedFire | null;
}

/** A fire as its claim records it: with a message to start (`messageId` its reply's), or why it sends none. */
export interface ClaimedFire extends LastFire {
  /** The id of the message the fire sends (its reply's is `messageId`); null when it sends none. */
  userMessageId: string | null;
  /**
   * Until when the claimer has to start the fire's message; past it, another process may start it
   * (`unstartedFires`). Null when it sends none.
   */
  startBy: string | null;
}

/** A fire claimed with a message that nobody has started yet, its claimer's time to start it over. */
export interface UnstartedFire {
  scheduleId: string;
  scheduledAt: string;
  accountId: string;
  agentId: string;
  /** The ids of the message and of its reply, as the claim recorded them. */
  userMessageId: string;
  messageId: string;
  startBy: string;
}

/**
 * The schedules of agents and the rows of their fires. A fire is run by whoever claims it: `claimFire` advances
 * the schedule with one conditional update and inserts the fire's row (unique per schedule and time) in the same
 * transaction, so that any number of processes scanning one store run each fire once.
 */
export interface ScheduleStore {
  createSchedule(schedule: ScheduleRecord): Promise<ScheduleRecord>;
  getSchedule(accountId: string, agentId: string, id: string): Promise<ScheduleRecord | null>;
  /** An agent's schedules by id (newest first for `desc`); a foreign cursor throws INVALID_REQUEST. */
  listSchedules(accountId: string, agentId: string, page: PageRequest): Promise<Page<ScheduleRecord>>;
  /** Null when the agent has no such schedule. */
  updateSchedule(
    accountId: string,
    agentId: string,
    id: string,
    patch: SchedulePatch,
  ): Promise<ScheduleRecord | null>;
  deleteSchedule(accountId: string, agentId: string, id: string): Promise<boolean>;
  /** Enabled schedules whose next fire time is at or before `now`, soonest first, at most `limit`. */
  dueSchedules(now: string, limit: number): Promise<ScheduleRecord[]>;
  /**
   * Claims one fire: true when this caller advanced the schedule from `scheduledAt` and recorded the fire (so it
   * alone runs it); false when another claimed it first, or the schedule changed meanwhile, or that fire time
   * already has its row (then the schedule is still advanced).
   */
  claimFire(claim: FireClaim): Promise<boolean>;
  /** Removes the rows of fires due before `before`, at most `limit`; how many. */
  removeOldFires(before: string, limit: number): Promise<number>;
  /** Fires whose claimer did not start their message by `startBy`, which is at or before `now`; oldest first. */
  unstartedFires(now: string, limit: number): Promise<UnstartedFire[]>;
  /**
   * Takes over the start of a fire whose claimer did not start it: true when this caller moved its `startBy` from
   * the value read (`fire.startBy`) to `startBy`, so that it alone starts it now.
   */
  reclaimFire(fire: UnstartedFire, startBy: string): Promise<boolean>;
  /**
   * Notes a fire's message started (`error` null) or never to be started (`error` says why, and becomes the
   * schedule's last fire's error while that fire is its last).
   */
  settleFire(
    scheduleId: string,
    scheduledAt: string,
    error: { code: string; message: string } | null,
  ): Promise<void>;
}

export interface ConversationStore {
  /** The schedules of agents (their rows go with the agent's purge). */
  readonly schedules: ScheduleStore;
  /**
   * A page of the account's audit events this service recorded, in the query's order (docs/api/audit.md). Each
   * change a caller makes (schedules, documents, memories written or deleted through the API, a conversation
   * deleted, a user erased, an agent's runs cancelled) records its event, with the stamp of the call it serves
   * (`currentAuditStamp`), in its own transaction.
   */
  listAuditEvents(accountId: string, query: AuditQuery): Promise<{ items: AuditEvent[]; hasMore: boolean }>;
  /** Removes up to `limit` audit events recorded before `before` (ISO-8601); how many it removed. */
  pruneAuditEvents(before: string, limit: number): Promise<number>;
  /**
   * The history a prompt can use, oldest first: what `fitHistory` of history.ts keeps of the whole conversation
   * (the most recent turns within `limits`, cut between turns, never starting with a reply), or more. A store may
   * count a turn's characters as code points, fewer than the prompt's UTF-16 units for astral ones, never more;
   * so this is at least what the prompt keeps, and the prompt makes the exact cut.
   */
  recentTurns(key: ConversationKey, limits: HistoryLimits): Promise<HistoryTurn[]>;
  /**
   * Stores the message, its reply and the call record, adds the call to the usage rollups, writes `events` to
   * the outbox and leaves the line (`exchange.leaves`), in one transaction. Stores nothing and returns false when
   * the agent has been purged, so a reply that completes after its agent was deleted leaves no trace and no event
   * (its place is then left as `leaveConversation` leaves it).
   */
  saveExchange(exchange: NewExchange, call: CallRecord, events?: readonly NewOutboxEvent[]): Promise<boolean>;
  /**
   * Stores the record of a call that stored no reply, adds it to the usage rollups and writes `events` to the
   * outbox, in one transaction; false (nothing stored, no event) when the agent has been purged.
   */
  recordCall(call: CallRecord, events?: readonly NewOutboxEvent[]): Promise<boolean>;
  /**
   * Records many calls as `recordCall` records each (record and usage rollups; no events), in one transaction:
   * bulk loads, such as the benchmark's million sends. Calls of purged agents are left out.
   */
  recordCalls(calls: readonly CallRecord[]): Promise<void>;
  /**
   * Adds the tokens of a call made for a turn (a memory extraction) to the usage rollups of its agent, user, model
   * and key, counting no message, error or latency, and storing no call record; nothing when the agent has been
   * purged.
   */
  recordTokens(call: CallRecord): Promise<void>;
  /** The oldest events of the outbox, at most `limit`, in the order they were written. */
  pendingEvents(limit: number): Promise<OutboxEvent[]>;
  /**
   * Removes events from the outbox once they have been published; seqs no longer there are passed over. SQLite
   * commits the removal without waiting for the disk: a power loss may take it back, and the events are then
   * published again (delivery is at least once).
   */
  removeEvents(seqs: readonly number[]): Promise<void>;
  /**
   * One page of the conversation's turns, oldest first, starting after `cursor` (from the start when null). A
   * cursor that no page returned throws AppError INVALID_REQUEST.
   */
  listTurns(key: ConversationKey, page: { limit: number; cursor: string | null }): Promise<TurnPage>;
  /** The agent's call records, oldest first. */
  listCalls(accountId: string, agentId: string): Promise<CallRecord[]>;
  /**
   * Deletes the agent's conversations, turns, memories, call records, usage (its rollup rows, and its share of the
   * account's) and the events of it still in the outbox in one transaction, and remembers the agent as purged, so
   * nothing is stored for it afterwards. Idempotent: a repeated purge deletes nothing more.
   */
  purgeAgent(accountId: string, agentId: string): Promise<PurgeResult>;
  /** An agent's conversations by latest activity (newest first for `desc`), filtered by user and room. */
  listConversations(
    accountId: string,
    agentId: string,
    filter: { userId?: string; roomId?: string },
    page: PageRequest,
  ): Promise<Page<ConversationRecord>>;
  /**
   * An agent's messages, both roles, in storage order (a message before its reply). A `conversationId` that is not
   * one of the agent's throws AppError CONVERSATION_NOT_FOUND.
   */
  listMessages(
    accountId: string,
    agentId: string,
    filter: MessageFilter,
    page: PageRequest,
  ): Promise<Page<TurnRecord>>;
  /**
   * The page `listMessages` reads, as each message's public JSON text (stored-messages.ts): the one kept with its
   * turn, or for a turn stored before texts were kept, its columns presented.
   */
  listMessageTexts(
    accountId: string,
    agentId: string,
    filter: MessageFilter,
    page: PageRequest,
  ): Promise<Page<string>>;
  /** One of an agent's messages, or null. */
  getMessage(accountId: string, agentId: string, messageId: string): Promise<TurnRecord | null>;
  /**
   * Deletes one of an agent's conversations, its messages and the runs of its messages in one transaction, and
   * returns how many messages went with it; null when the agent has no such conversation.
   */
  deleteConversation(accountId: string, agentId: string, conversationId: string): Promise<number | null>;
  /**
   * The next of a user's messages across every agent of the account, in storage order, after `cursor` (from the
   * start when null): at most `limit`, with the cursor of the next read (null after the last message).
   */
  exportUser(
    accountId: string,
    userId: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ turns: TurnRecord[]; next: string | null }>;
  /**
   * Deletes a user's conversations, messages and memories in every agent of the account, and removes the user id from the
   * call records and the usage rollups (their counts join the blank user's), in one transaction; returns how many
   * messages were deleted (0 when repeated).
   */
  eraseUser(accountId: string, userId: string): Promise<number>;
  /**
   * The account's usage from its rollups (usage.ts): every bucket of the range, zero-filled, and the totals of the
   * range, grouped as asked. Throws AppError INVALID_REQUEST, naming the field, for a question `planUsage` refuses.
   */
  getUsage(request: UsageRequest): Promise<UsageReport>;
  /**
   * Records a new run, pending. A leased run's place in its conversation's line (`placeOwner` the attempt's,
   * QueueEntry.owner) becomes its holder's in the same transaction: of two attempts at one message, the place is
   * the recorded one's, and the other leaves nothing when it leaves.
   */
  startRun(run: RunRecord, placeOwner?: string): Promise<void>;
  /** Appends events to a run's log (the next ones after those it has, in order). */
  appendRunEvents(runId: string, events: readonly RunEvent[]): Promise<void>;
  /**
   * Appends a run's last events and ends it, in one transaction, if it is still pending; returns whether it was
   * (false: it had been ended already, e.g. as abandoned, and nothing was written).
   */
  endRun(runId: string, events: readonly RunEvent[], end: RunEnd): Promise<boolean>;
  /**
   * Performs writes of many runs in order, in one transaction: one commit for every log written meanwhile. An end
   * of a run no longer pending writes nothing, as `endRun`. The commit does not wait for the disk: a crash of the
   * machine (or of Postgres) may lose the last batches, never anything else.
   */
  writeRuns(writes: readonly RunWrite[]): Promise<void>;
  /** One of an agent's runs, expired or not, or null. */
  getRun(accountId: string, agentId: string, runId: string): Promise<RunRecord | null>;
  /** The events of a run after `after`, in order, at most `limit`. */
  runEvents(runId: string, after: number, limit: number): Promise<RunEvent[]>;
  /**
   * The newest run of the account sent with an Idempotency-Key (its SHA-256 hex) that is still pending and not past
   * its deadline at `now`, or null.
   */
  keyedRun(accountId: string, keyHash: string, now: string): Promise<RunRecord | null>;
  /**
   * Extends until `expiresAt` the leases `holder` holds on the pending runs among `runIds`; answers the ids of
   * those it still held (a run not among them was taken over, or has ended).
   */
  renewLeases(holder: string, runIds: readonly string[], expiresAt: string): Promise<string[]>;
  /** Pending runs whose lease expired before `now`, oldest lease first, at most `limit`. */
  expiredLeases(now: string, limit: number): Promise<ExpiredLease[]>;
  /**
   * Takes a pending run whose lease expired before `now` for `holder`, in one conditional update (of two processes
   * claiming it at once, one only gets it): its lease until `expiresAt`, its deadline `deadlineAt`, its takeovers
   * counted. Answers the run as claimed, or null when it was not there to take.
   */
  claimRun(
    runId: string,
    claim: { holder: string; now: string; expiresAt: string; deadlineAt: string },
  ): Promise<RunRecord | null>;
  /**
   * Ends as `end` every pending run of the agent that keeps a log (streamed and background messages, not keyed JSON
   * sends); answers their ids.
   */
  cancelAgentRuns(accountId: string, agentId: string, end: RunEnd): Promise<string[]>;
  /**
   * One page of the agent's runs that keep a log, by id (newest first unless asked otherwise), only those of
   * `status` when given. Throws INVALID_REQUEST for a cursor that is not one of the agent's runs.
   */
  listRuns(
    accountId: string,
    agentId: string,
    status: ListedRunStatus | null,
    page: PageRequest,
  ): Promise<Page<RunRecord>>;
  /**
   * The runs among `runIds` that have ended in the store (the kill switch ended them while their process
   * generates them), for that process to stop them.
   */
  endedRunsAmong(runIds: readonly string[]): Promise<string[]>;
  /**
   * Takes a place at the end of the conversation's line (conversation-queue.ts), or renews the place `entry.id`
   * has when `entry.owner` owns it or `entry.takeover` holds its run (a run taken over keeps its place); a live
   * place another attempt owns is left as it is. `reject`: "refused", and no place taken, when the line has anyone
   * live in it. `interrupt`: every other live place of the line is marked interrupted. The place is then admitted
   * as `admitTurn` admits it, in the same transaction: answers "admitted" or "waiting".
   */
  joinConversation(entry: QueueEntry, mode: ConflictMode, now: string): Promise<QueueJoin>;
  /** Admits a place when no live place is before it and none is admitted; says where it stands. */
  admitTurn(id: string, now: string): Promise<QueueTurn>;
  /**
   * Leaves the line (a message answered, failed or cancelled), while `owner` (QueueEntry.owner) owns the place: a
   * run taken over by another process, or recorded by another attempt, keeps the place its owner has.
   */
  leaveConversation(id: string, owner: string): Promise<void>;
  /** Renews the places `holder` has among `ids`; answers each renewed one and whether it was interrupted. */
  renewQueue(holder: string, ids: readonly string[], expiresAt: string): Promise<QueueRenewal[]>;
  /**
   * Records a person's answers on a run paused for approval, in one conditional update: only while it is paused
   * and its decisions are still `decision.expected` (of two answers at once, one only is recorded). With
   * `decision.resume` it stops waiting and is leased to the resuming process. Answers the run as updated, or null.
   */
  decideRun(
    accountId: string,
    agentId: string,
    runId: string,
    decision: RunDecision,
  ): Promise<RunRecord | null>;
  /** Paused runs whose wait for approval ended before `now`, at most `limit`. */
  expiredApprovals(now: string, limit: number): Promise<ExpiredApproval[]>;
  /** Runs still pending past their deadline at `now`, at most `limit`. */
  abandonedRuns(now: string, limit: number): Promise<Pick<RunRecord, "id" | "background">[]>;
  /**
   * Deletes at most `limit` runs kept until before `now`, with their events, and the events of at most `limit` runs
   * expired at `now` whose record is kept longer; returns how many runs it deleted or emptied (none once there are
   * no more).
   */
  removeExpiredRuns(now: string, limit: number): Promise<number>;
  /**
   * The exchange stored with an Idempotency-Key (its SHA-256 hex) of the account, or null when there is none or
   * it expired at `now`. Purging the agent, deleting the conversation and erasing the user remove it.
   */
  keyedExchange(accountId: string, keyHash: string, now: string): Promise<KeyedExchange | null>;
  /** Deletes at most `limit` keys of exchanges expired at `now`; returns how many. */
  removeExpiredKeys(now: string, limit: number): Promise<number>;
  /**
   * Stores memories of one user, in one transaction: each whose `key` the user already has is not stored again, the
   * one known is answered instead (`created` false); then the user's oldest beyond `limit` are deleted. Nothing is
   * stored (an empty answer) when the agent has been purged.
   */
  addMemories(
    owner: MemoryOwner,
    memories: readonly NewMemory[],
    limit: number,
  ): Promise<{ memory: MemoryRecord; created: boolean }[]>;
  /**
   * An agent's memories by id (newest first for `desc`), filtered by user and by a full-text query. A cursor
   * that is not one of the agent's memories throws AppError INVALID_REQUEST.
   */
  listMemories(
    accountId: string,
    agentId: string,
    filter: MemoryFilter,
    page: PageRequest,
  ): Promise<Page<MemoryRecord>>;
  /**
   * The user's memories most relevant to `text`, at most `limit`; none when nothing matches. By full-text rank
   * alone, or, given `query` (the vector of `text`) and a store that searches vectors, fused with the ranking of
   * the memories' vectors of the same model by cosine distance (memories.ts, `fuseRankings`).
   */
  relevantMemories(
    owner: MemoryOwner,
    text: string,
    limit: number,
    query?: MemoryVector,
  ): Promise<MemoryRecord[]>;
  /**
   * Keeps the vectors of the user's memories (by id), one per memory (a later one replaces it); those of memories
   * deleted meanwhile are dropped. Deleting a memory deletes its vector.
   */
  saveMemoryVectors(
    owner: MemoryOwner,
    vectors: readonly { memoryId: string; vector: MemoryVector }[],
  ): Promise<void>;
  /**
   * Whether this store ranks memories by vector: SQLite with sqlite-vec loaded, Postgres with the pgvector
   * extension installed. Vectors are kept either way.
   */
  searchesVectors(): Promise<boolean>;
  /** Deletes one of an agent's memories; false when it has none of that id. */
  deleteMemory(accountId: string, agentId: string, memoryId: string): Promise<boolean>;
  /**
   * The next of a user's memories across every agent of the account, oldest first, after `cursor` (a memory id;
   * from the start when null): at most `limit`, with the cursor of the next read (null after the last).
   */
  exportUserMemories(
    accountId: string,
    userId: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ memories: MemoryRecord[]; next: string | null }>;
  /**
   * Stores a document and its chunks in one transaction; false (nothing stored) when the agent has been purged.
   */
  addDocument(accountId: string, agentId: string, document: NewDocument): Promise<DocumentRecord | null>;
  /**
   * An agent's documents by id (newest first for `desc`). A cursor that is not one of the agent's documents
   * throws AppError INVALID_REQUEST.
   */
  listDocuments(accountId: string, agentId: string, page: PageRequest): Promise<Page<DocumentRecord>>;
  /** One of an agent's documents, or null. */
  getDocument(accountId: string, agentId: string, documentId: string): Promise<DocumentRecord | null>;
  /** The `source` of each of an agent's documents that has one. */
  documentSources(accountId: string, agentId: string): Promise<string[]>;
  /** Deletes one of an agent's documents with its chunks; false when it has none of that id. */
  deleteDocument(accountId: string, agentId: string, documentId: string): Promise<boolean>;
  /**
   * The agent's chunks that match any search term of `text` (memories.ts `searchTerms`), best first, at most
   * `limit`; none when nothing matches. Given `query` (the vector of `text`) and a store that searches vectors,
   * fused with the ranking of the chunks' vectors of the same model, as memories are (documents.ts `fuseChunks`).
   */
  relevantChunks(
    accountId: string,
    agentId: string,
    text: string,
    limit: number,
    query?: MemoryVector,
  ): Promise<ChunkMatch[]>;
  /**
   * Keeps the vectors of the agent's chunks (by document and position), one per chunk (a later one replaces it);
   * those of chunks deleted meanwhile are dropped. Deleting a document deletes its chunks' vectors.
   */
  saveChunkVectors(
    accountId: string,
    agentId: string,
    vectors: readonly { documentId: string; chunk: number; vector: MemoryVector }[],
  ): Promise<void>;
  /** Resolves when the database answers a trivial query: what readiness reports. */
  ping(): Promise<void>;
  /** Flushes and closes; the store is unusable afterwards. */
  close(): Promise<void>;
}

export type { ConflictMode } from "@agentry/core";

/** A message's place in its conversation's line, as its holder writes it. */
export interface QueueEntry {
  /** The reply's id (the run's, for a run). */
  id: string;
  key: ConversationKey;
  /** The process that answers the message and renews the place. */
  holder: string;
  /**
   * The one attempt at answering the message that owns the place (a token of its own): it alone leaves it. Two
   * attempts at one message (a schedule fire started by two processes) join under the same id; the place is the
   * one whose run is recorded (`startRun`).
   */
  owner: string;
  /**
   * The joiner holds the message's run, taken over from a process that stopped: it takes the place whoever owned
   * it, if the store records it as the run's holder.
   */
  takeover?: boolean;
  expiresAt: string;
  createdAt: string;
}

/** Where a place stands: its message may run, must wait, or has left the line. */
export type QueueTurn = "admitted" | "waiting" | "gone";

/** A join's outcome: no place taken (a `reject` join into a busy line), or the place taken and where it stands. */
export type QueueJoin = "refused" | "admitted" | "waiting";

export interface QueueRenewal {
  id: string;
  interrupted: boolean;
}
