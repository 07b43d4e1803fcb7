import {
  exceedsCharacters,
  type FallbackChoice,
  fallbackChoices,
  IDEMPOTENCY_KEY_TTL_MS,
  MESSAGE_BOUNDS,
  newId,
} from "@agentry/core";
import { AppError, asAppError, invalid } from "@agentry/errors";
import { currentRequestId, type Logger } from "@agentry/logging";
import type { Agent } from "@agentry/proto";
import type { JsonObject } from "@bufbuild/protobuf";
import { specJsonOf } from "./agent-spec.js";
import type { TurnContext } from "./context.js";
import { isInterrupted, type Place } from "./conversation-queue.js";
import { CallDeadline } from "./deadline.js";
import { CHUNKS_CONSIDERED, citationsOf, knowledgeTokenBudget, withinBudget } from "./documents.js";
import { messageCompleted, messageFailed } from "./events.js";
import { MAX_HISTORY_TURNS } from "./history.js";
import { MEMORIES_RECALLED, memoryEnabled, memoryLimit } from "./memories.js";
import { type AgentProfile, buildPrompt, type SuppliedContext, suppliedPrompt } from "./prompt.js";
import { incompleteError, sanitise } from "./providers/errors.js";
import type {
  FinishReason,
  ModelProvider,
  PromptMessage,
  ProviderRequest,
  ProviderResult,
} from "./providers/types.js";
import {
  type GenerationSettings,
  generationSettings,
  maxToolSteps,
  replyMaxTokens,
  toolChoice,
} from "./settings.js";
import type { CallOutcome, CallRecord, CitationRecord, ConversationKey, TurnRecord } from "./store/types.js";
import {
  type ApprovalDecision,
  drained,
  type PendingToolCall,
  type StoredRound,
  type ToolLoopEvent,
  toolRounds,
} from "./tool-loop.js";
import { type ToolCallRecord, TurnTools } from "./tools.js";

/** One message to an agent, as the gateway passes it. */
export interface MessageInput {
  accountId: string;
  /** The agent's current record; the gateway has checked that it exists and accepts messages. */
  agent: Agent | undefined;
  text: string;
  userId?: string | undefined;
  roomId?: string | undefined;
  /** This message's context: extra system context for the model, never stored. */
  context?: JsonObject | undefined;
  requestId?: string | undefined;
  /** The API key the message was sent with, for usage by key. */
  apiKeyId?: string | undefined;
  /** Epoch milliseconds by which the caller wants the reply (its RPC deadline); tools never run past it. */
  deadline?: number | undefined;
  /** The ids of the message and of its reply, when the caller needs the reply's before the call (a run's). */
  ids?: { message: string; reply: string } | undefined;
  /** The SHA-256 hex of the Idempotency-Key it was sent with, kept with its exchange (idempotent-sends.ts). */
  idempotencyKeyHash?: string | undefined;
  /** Sent in the background: its stored reply is read by id in that form (message-runs.ts). */
  background?: boolean | undefined;
  /** The conversation before `text` as the caller supplies it, in place of the stored one (prompt.ts). */
  suppliedContext?: SuppliedContext | undefined;
  /**
   * Set when the message is generated again by a process that took its run over (message-runs.ts): the rounds
   * of tool calls its log has, which are not run again. Its log has its `started` event already.
   */
  resume?:
    | {
        rounds: StoredRound[];
        /** The person's answers to the calls the message paused before (`ApproveToolCalls`), by call id. */
        decisions?: ReadonlyMap<string, ApprovalDecision>;
        /** The tokens of its rounds counted in usage when it paused for approval: not counted again. */
        counted?: { inputTokens: number; outputTokens: number };
      }
    | undefined;
  /** The send's `onConflict` (conversation-queue.ts); unset, the agent's `settings.concurrentMessages`. */
  onConflict?: string | undefined;
  /**
   * A message that passed no gateway (a platform's, a schedule's): started in the background, it reserves against
   * the agent's and the account's budgets first (`TurnContext.budgets`), and is refused BUDGET_EXCEEDED when one
   * is spent. A gateway's messages are charged by the gateway.
   */
  enforceBudgets?: boolean | undefined;
  /** The message's place in its conversation's line: left in the transaction that stores its exchange. */
  place?: Place | undefined;
}

/** The agent's complete reply (docs/api/messages-and-streams.md, "Reply": the non-stream reply `data`). */
export interface ReplyRecord {
  id: string;
  agentId: string;
  /** Echoed as given; undefined when the message had none. */
  userId: string | undefined;
  roomId: string | undefined;
  text: string;
  model: string;
  modelProvider: string;
  finishReason: FinishReason;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  latencyMs: number;
  createdAt: Date;
  /** Whether a fallback answered (`settings.fallbacks`), the agent's own model having failed. */
  fallback: boolean;
  /** The tools the model called during the turn, in order, with their outcomes; empty when it called none. */
  toolCalls: ToolCallRecord[];
  /** The chunks of the agent's documents the prompt carried, best first; empty when it carried none. */
  citations: CitationRecord[];
}

export type StreamEvent =
  | {
      type: "started";
      messageId: string;
      agentId: string;
      userId: string | undefined;
      roomId: string | undefined;
    }
  | ToolLoopEvent
  /**
   * The turn paused before tools that wait for a person's approval; nothing more comes until it is answered.
   * `tokens`: what the turn spent since it began or last paused, counted in usage with the pause; kept in the
   * run's log only (never sent to callers), so that the rest of the turn does not count them again.
   */
  | {
      type: "approval_required";
      messageId: string;
      pendingToolCalls: PendingToolCall[];
      tokens?: CallRecord | undefined;
    }
  | { type: "completed"; reply: ReplyRecord };

/** Answers one message with the complete reply, and stores the exchange once the reply is complete. */
export async function sendMessage(
  ctx: TurnContext,
  input: MessageInput,
  signal: AbortSignal,
): Promise<ReplyRecord> {
  const call = new Call(ctx, input, false);
  let deadline: CallDeadline | undefined;
  try {
    const plan = await call.plan(signal);
    const answered = await call.startWithFallbacks(
      plan,
      () => new CallDeadline(signal, { totalMs: ctx.limits.timeoutMs }),
      (opened) => {
        deadline = opened;
      },
      (provider, request, abort) => provider.complete(request, abort),
    );
    answered.deadline.dispose();
    const result = await drained(call.useTools(answered.started, signal, false));
    // A JSON send to an agent with tools that wait for approval is generated as a run (message-runs.ts), which can
    // pause; this path cannot.
    if ("paused" in result) throw new AppError("INTERNAL_ERROR", "The message paused outside a run.");
    return await call.complete(result);
  } catch (error) {
    // A complete reply came whole or not at all: an interrupted one has no text.
    if (isInterrupted(signal)) return await call.cancelled("");
    const cancelled = deadline?.abortCause === "cancelled" || signal.aborted;
    throw await call.fail(error, cancelled ? "cancelled" : "failed");
  } finally {
    deadline?.dispose();
  }
}

/**
 * Answers one message as a stream: started (once the provider accepted the request), deltas, then completed
 * with the stored reply. Any failure is thrown; before `started` that means the caller got no event at all.
 * When the caller stops iterating, the provider call is abandoned and nothing is stored but the call record.
 */
export async function* streamMessage(
  ctx: TurnContext,
  input: MessageInput,
  signal: AbortSignal,
): AsyncGenerator<StreamEvent> {
  const call = new Call(ctx, input, true);
  let deadline: CallDeadline | undefined;
  let settled = false;
  // The text sent so far, every round's: what an interrupted reply keeps.
  let partial = "";
  const heard = (text: string) => {
    partial += text;
  };
  try {
    const plan = await call.plan(signal);
    const stored = input.resume?.rounds ?? [];
    if (stored.length > 0) {
      // Taken over after a round of tool calls: the model's first answer is the log's, its tools' outcomes too.
      const first: ProviderResult = {
        text: stored[0]!.text,
        model: plan.request.model,
        finishReason: "other",
        // Spent by the process that stored the round (tool-loop.ts): counted, though not spent again.
        usage: stored[0]!.spent ?? { inputTokens: 0, outputTokens: 0 },
        toolCalls: stored[0]!.calls,
      };
      const result = yield* tally(call.useTools(first, signal, true, stored, input.resume?.decisions), heard);
      if ("paused" in result) {
        settled = true;
        yield {
          type: "approval_required",
          messageId: call.id,
          pendingToolCalls: result.paused,
          tokens: call.pausedTokens(),
        };
        return;
      }
      const reply = await call.complete(result);
      settled = true;
      yield { type: "completed", reply };
      return;
    }
    // Until a provider has accepted the request nothing has been sent: the next model in line may answer.
    const accepted = await call.startWithFallbacks(
      plan,
      () =>
        new CallDeadline(signal, {
          totalMs: ctx.limits.timeoutMs,
          firstTokenMs: ctx.limits.firstTokenTimeoutMs,
        }),
      (opened) => {
        deadline = opened;
      },
      (provider, request, abort) => provider.stream(request, abort),
    );
    const { provider, deadline: current } = accepted;
    let text = "";
    let done: Omit<ProviderResult, "text"> | undefined;
    try {
      if (!input.resume) {
        yield {
          type: "started",
          messageId: call.id,
          agentId: call.key.agentId,
          userId: input.userId,
          roomId: input.roomId,
        };
      }
      for await (const event of accepted.started) {
        if (event.type === "done") {
          done = event;
          continue;
        }
        // A tool call has begun: the model is answering, though with no text yet.
        if (event.type === "tool") {
          current.firstToken();
          continue;
        }
        if (call.firstTokenMs === null) {
          call.firstText();
          current.firstToken();
        }
        text += event.text;
        heard(event.text);
        yield { type: "delta", text: event.text };
      }
    } catch (error) {
      throw current.abortError(provider.name) ?? error;
    }
    // An aborted provider stream may end quietly, so only `done` says the reply is complete.
    if (!done) throw current.abortError(provider.name) ?? incompleteError(provider.name);
    current.dispose();
    const result = yield* tally(call.useTools({ text, ...done }, signal, true), heard);
    if ("paused" in result) {
      settled = true;
      yield {
        type: "approval_required",
        messageId: call.id,
        pendingToolCalls: result.paused,
        tokens: call.pausedTokens(),
      };
      return;
    }
    const reply = await call.complete(result);
    settled = true;
    yield { type: "completed", reply };
  } catch (error) {
    settled = true;
    if (isInterrupted(signal)) {
      yield { type: "completed", reply: await call.cancelled(partial) };
      return;
    }
    const cancelled = deadline?.abortCause === "cancelled" || signal.aborted;
    throw await call.fail(error, cancelled ? "cancelled" : "failed");
  } finally {
    if (!settled) {
      // The caller stopped reading (it went away): abandon the provider call and record why.
      deadline?.cancel();
      await call.fail(new AppError("AGENT_UNAVAILABLE", "The caller went away."), "cancelled");
    }
    deadline?.dispose();
  }
}

/** Passes a tool loop's events on, telling `heard` of each delta's text; returns what the loop returns. */
async function* tally<R>(
  events: AsyncGenerator<ToolLoopEvent, R>,
  heard: (text: string) => void,
): AsyncGenerator<ToolLoopEvent, R> {
  for (;;) {
    const next = await events.next();
    if (next.done) return next.value;
    if (next.value.type === "delta") heard(next.value.text);
    yield next.value;
  }
}

/** A stored reply (an assistant turn) as its send answered it. */
export function replyOfTurn(turn: TurnRecord): ReplyRecord {
  return {
    id: turn.id,
    agentId: turn.agentId,
    userId: turn.userId === "" ? undefined : turn.userId,
    roomId: turn.roomId === "" ? undefined : turn.roomId,
    text: turn.text,
    model: turn.model ?? "",
    modelProvider: turn.provider ?? "",
    finishReason: (turn.finishReason ?? "stop") as FinishReason,
    usage: {
      inputTokens: turn.inputTokens,
      outputTokens: turn.outputTokens,
      totalTokens: turn.inputTokens + turn.outputTokens,
    },
    latencyMs: turn.latencyMs,
    createdAt: new Date(turn.createdAt),
    fallback: turn.fallback,
    toolCalls: turn.toolCalls,
    citations: turn.citations,
  };
}

/** The conversation a message belongs to, after checking the message itself. */
export function conversationKey(input: MessageInput): ConversationKey {
  if (!input.accountId) throw invalid("account_id", "is required");
  const agent = input.agent;
  if (!agent?.id) throw invalid("agent", "is required");
  if (agent.accountId && agent.accountId !== input.accountId) {
    throw invalid("agent", "belongs to another account");
  }
  if (input.text.length === 0 || exceedsCharacters(input.text, MESSAGE_BOUNDS.textMaxLength)) {
    throw invalid("text", `must be 1 to ${MESSAGE_BOUNDS.textMaxLength} characters`);
  }
  return {
    accountId: input.accountId,
    agentId: agent.id,
    userId: input.userId ?? "",
    roomId: input.roomId ?? "",
  };
}

/** One model call from receipt to outcome: its plan, its timing, and its record in the store and the log. */
class Call {
  // The message's id first: ids are time-ordered, and the message comes before its reply.
  private readonly messageId: string;
  readonly id: string;
  readonly key: ConversationKey;
  private logger: Logger | undefined;
  /** From receiving the message to the reply's first text; null until the text begins. */
  firstTokenMs: number | null = null;
  /** Whether a fallback is answering. */
  fallback = false;
  private readonly receivedAt = new Date();
  private readonly started = performance.now();
  private provider: ModelProvider | undefined;
  private model: string | null = null;
  private recorded = false;
  /** The agent's own provider, the fallbacks not yet tried, and the failure of its own model, once it failed. */
  private primary: ModelProvider | undefined;
  private fallbacks: FallbackChoice[] = [];
  private primaryFailure: unknown;
  private prompt: Omit<ProviderRequest, "model" | "maxTokens"> | undefined;
  private settings: GenerationSettings = {};
  /** The turn's tools (none when the agent has no active plugin) and the rounds of calls it may make. */
  private tools: TurnTools | undefined;
  private maxToolSteps = 0;
  private toolCalls: ToolCallRecord[] = [];
  /** The chunks of the agent's documents the prompt carries (documents.ts). */
  private citations: CitationRecord[] = [];
  /** Tokens of the provider calls that answered, for the record of a turn that fails in a later round. */
  private readonly spent = { inputTokens: 0, outputTokens: 0 };
  /** Set when a later message interrupted this one: its reply is stored as cancelled. */
  private interrupted = false;

  constructor(
    private readonly ctx: TurnContext,
    private readonly input: MessageInput,
    private readonly stream: boolean,
  ) {
    this.key = conversationKey(input);
    this.messageId = input.ids?.message ?? newId("message");
    this.id = input.ids?.reply ?? newId("message");
  }

  /** The call's logger, made when first used: an answered call logs once, after its reply has left. */
  get log(): Logger {
    if (this.logger) return this.logger;
    const requestId = this.input.requestId;
    this.logger = this.ctx.logger.child({
      agentId: this.key.agentId,
      messageId: this.id,
      ...(requestId && currentRequestId() !== requestId ? { requestId } : {}),
    });
    return this.logger;
  }

  /** The prompt of an ordinary message: the agent's examples and the stored history before the new message. */
  private async storedPrompt(
    profile: AgentProfile,
    settings: JsonObject | undefined,
  ): Promise<{ system: string; messages: PromptMessage[] }> {
    const historyLimits = { maxTurns: MAX_HISTORY_TURNS, tokenBudget: this.ctx.limits.contextTokenBudget };
    const history = await this.ctx.store.recentTurns(this.key, historyLimits);
    const { memories, passages } = await this.recall(settings);
    return buildPrompt({
      profile,
      context: this.input.context,
      history,
      text: this.input.text,
      memories,
      passages,
      historyLimits,
    });
  }

  /**
   * What the agent knows that bears on the message, whichever way its context came: the user's memories and its
   * documents' passages within the knowledge budget. The passages become the reply's citations.
   */
  private async recall(settings: JsonObject | undefined) {
    // A user's memories reach only that user's prompts with this agent; messages without a user have none.
    const recallMemories = this.key.userId !== "" && memoryEnabled(settings);
    const budget = knowledgeTokenBudget(settings);
    // One vector of the message serves both searches.
    const query =
      recallMemories || budget > 0
        ? await this.ctx.memoryVectors?.queryVector(this.key, this.input.text)
        : undefined;
    const memories = recallMemories
      ? await this.ctx.store.relevantMemories(this.key, this.input.text, MEMORIES_RECALLED, query)
      : [];
    const passages =
      budget > 0
        ? withinBudget(
            await this.ctx.store.relevantChunks(
              this.key.accountId,
              this.key.agentId,
              this.input.text,
              CHUNKS_CONSIDERED,
              query,
            ),
            budget,
          )
        : [];
    this.citations = citationsOf(passages);
    return { memories, passages };
  }

  /** Settings, provider, model, prompt and tools; every failure here is the caller's or the configuration's. */
  async plan(signal: AbortSignal): Promise<{ provider: ModelProvider; request: ProviderRequest }> {
    const spec = this.input.agent?.spec;
    const { settings, personality, plugins } = specJsonOf(this.input.agent);
    this.settings = generationSettings(settings);
    this.maxToolSteps = maxToolSteps(settings);
    const { provider, model } = this.ctx.providers.resolve(spec?.modelProvider, spec?.model);
    this.provider = provider;
    this.primary = provider;
    this.model = model;
    this.fallbacks = fallbackChoices(settings);
    const profile = {
      name: spec?.name ?? "",
      bio: spec?.bio ?? [],
      personality,
      knowledge: spec?.knowledge ?? [],
      goals: spec?.goals ?? [],
    };
    const supplied = this.input.suppliedContext;
    const prompt = supplied
      ? suppliedPrompt(profile, supplied, this.input.text, await this.recall(settings))
      : await this.storedPrompt(profile, settings);
    this.tools =
      this.maxToolSteps > 0
        ? await TurnTools.prepare(
            this.ctx.plugins,
            {
              accountId: this.key.accountId,
              agentId: this.key.agentId,
              plugins,
              searchDocuments: async (query, limit) =>
                (await this.ctx.store.relevantChunks(this.key.accountId, this.key.agentId, query, limit)).map(
                  ({ documentId, title, chunk, text }) => ({ documentId, title, chunk, text }),
                ),
            },
            signal,
            this.log,
          )
        : undefined;
    const { maxTokens: _, ...sampling } = this.settings;
    this.prompt = {
      ...prompt,
      ...sampling,
      ...(this.tools ? { tools: this.tools.specs, toolChoice: toolChoice(settings) } : {}),
    };
    return { provider, request: this.request(provider, model) };
  }

  /** The call for one provider and model: the prompt, with the reply's token bound for that provider. */
  private request(provider: ModelProvider, model: string): ProviderRequest {
    return { model, ...this.prompt!, maxTokens: replyMaxTokens(this.settings, provider) };
  }

  /**
   * The next model in line after a failure, or null when there is none or the failure is not one to fall back on:
   * a 503-class failure (AGENT_UNAVAILABLE) of any model, or a MODEL_ERROR of a provider other than the agent's
   * own (the agent's own MODEL_ERROR is its configuration's fault, which its status reports). A fallback whose
   * provider is not configured here is passed over.
   */
  fallBack(failure: unknown): { provider: ModelProvider; request: ProviderRequest } | null {
    this.primaryFailure ??= failure;
    if (!(failure instanceof AppError)) return null;
    const otherProvider = this.provider !== this.primary;
    if (failure.code !== "AGENT_UNAVAILABLE" && !(failure.code === "MODEL_ERROR" && otherProvider))
      return null;
    while (this.fallbacks.length > 0) {
      const next = this.fallbacks.shift()!;
      let resolved: { provider: ModelProvider; model: string };
      try {
        resolved = this.ctx.providers.resolve(next.modelProvider, next.model ?? undefined);
      } catch {
        continue;
      }
      this.log.warn(
        {
          provider: this.provider?.name,
          model: this.model,
          code: failure.code,
          fallbackProvider: resolved.provider.name,
          fallbackModel: resolved.model,
        },
        "model failed; trying the next in line",
      );
      this.provider = resolved.provider;
      this.model = resolved.model;
      this.fallback = true;
      return { provider: resolved.provider, request: this.request(resolved.provider, resolved.model) };
    }
    return null;
  }

  /**
   * Starts the provider call (`begin`) with the agent's model, then with each model in line while the failure is
   * one to fall back on (`fallBack`). Each attempt has a deadline of its own (`open`: a timed-out model is what a
   * fallback is for), handed to `track` as it is opened, so that the caller can cancel or dispose the current one
   * whatever happens. Answers what was started, by which provider, under which deadline.
   */
  async startWithFallbacks<T>(
    first: { provider: ModelProvider; request: ProviderRequest },
    open: () => CallDeadline,
    track: (deadline: CallDeadline) => void,
    begin: (provider: ModelProvider, request: ProviderRequest, signal: AbortSignal) => Promise<T>,
  ): Promise<{ started: T; provider: ModelProvider; deadline: CallDeadline }> {
    let { provider, request } = first;
    for (;;) {
      const deadline = open();
      track(deadline);
      try {
        return { started: await begin(provider, request, deadline.signal), provider, deadline };
      } catch (error) {
        const failure = deadline.abortError(provider.name) ?? error;
        const next = deadline.abortCause === "cancelled" ? null : this.fallBack(failure);
        if (!next) throw this.finalError(failure);
        deadline.dispose();
        ({ provider, request } = next);
      }
    }
  }

  /**
   * What a call whose models all failed ends with: the agent's own model's failure, so that the agent's status
   * reflects its own model only.
   */
  finalError(failure: unknown): unknown {
    return this.primaryFailure ?? failure;
  }

  /**
   * The rest of the turn once the model's first answer is in: when it called tools, the rounds of tool calls and
   * answers (tool-loop.ts) with the provider that answered, their events passed on; otherwise that answer.
   * Resolves to the turn's last answer, its text and usage those of every round, or to the calls it paused before
   * (they wait for a person's approval, `decisions` holding none for them).
   */
  async *useTools(
    first: ProviderResult,
    signal: AbortSignal,
    stream: boolean,
    stored?: readonly StoredRound[],
    decisions?: ReadonlyMap<string, ApprovalDecision>,
  ): AsyncGenerator<ToolLoopEvent, ProviderResult | { paused: PendingToolCall[] }> {
    if (!this.tools || !first.toolCalls?.length) {
      const { toolCalls: _, ...answer } = first;
      return answer;
    }
    const count = (usage: ProviderResult["usage"]) => {
      this.spent.inputTokens += usage.inputTokens;
      this.spent.outputTokens += usage.outputTokens;
    };
    count(first.usage);
    const end = yield* toolRounds({
      tools: this.tools,
      provider: this.provider!,
      request: this.request(this.provider!, this.model!),
      first,
      maxSteps: this.maxToolSteps,
      signal,
      turnDeadline: this.turnDeadline(),
      limits: {
        totalMs: this.ctx.limits.timeoutMs,
        ...(stream ? { firstTokenMs: this.ctx.limits.firstTokenTimeoutMs } : {}),
      },
      stream,
      onText: () => this.firstText(),
      onUsage: count,
      ...(stored ? { stored } : {}),
      ...(decisions ? { decisions } : {}),
    });
    this.toolCalls = end.toolCalls;
    return "paused" in end ? { paused: end.paused } : end.result;
  }

  /** When the turn must be over: the caller's deadline, or the turn timeout from the message's arrival. */
  private turnDeadline(): number {
    const own = this.receivedAt.getTime() + this.ctx.limits.turnTimeoutMs;
    return this.input.deadline === undefined ? own : Math.min(own, this.input.deadline);
  }

  /** Notes that the reply's first text has arrived. */
  firstText(): void {
    this.firstTokenMs ??= performance.now() - this.started;
  }

  /**
   * Stores the exchange, its call record and its `message.completed` event in one transaction, and returns the
   * reply.
   */
  async complete(result: ProviderResult): Promise<ReplyRecord> {
    const provider = this.provider!;
    // A reply that came whole (not streamed, or streamed without text) began when it arrived.
    this.firstText();
    const createdAt = new Date();
    const latencyMs = Math.round(performance.now() - this.started);
    const { inputTokens, outputTokens } = result.usage;
    const reply: ReplyRecord = {
      id: this.id,
      agentId: this.key.agentId,
      userId: this.input.userId,
      roomId: this.input.roomId,
      text: result.text,
      model: result.model,
      modelProvider: provider.name,
      finishReason: result.finishReason,
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      latencyMs,
      createdAt,
      fallback: this.fallback,
      toolCalls: this.toolCalls,
      citations: this.citations,
    };
    const place = this.input.place;
    const leaves = place?.leaving();
    const saved = await this.ctx.store.saveExchange(
      {
        key: this.key,
        user: { id: this.messageId, text: this.input.text, createdAt: this.receivedAt.toISOString() },
        reply: {
          id: reply.id,
          text: reply.text,
          model: reply.model,
          provider: reply.modelProvider,
          inputTokens,
          outputTokens,
          latencyMs,
          finishReason: reply.finishReason,
          createdAt: createdAt.toISOString(),
          toolCalls: reply.toolCalls,
          citations: reply.citations,
          ...(this.input.background ? { background: true } : {}),
          ...(reply.fallback ? { fallback: true } : {}),
        },
        ...(this.input.idempotencyKeyHash
          ? {
              idempotencyKey: {
                hash: this.input.idempotencyKeyHash,
                fallback: reply.fallback,
                expiresAt: new Date(createdAt.getTime() + IDEMPOTENCY_KEY_TTL_MS).toISOString(),
              },
            }
          : {}),
        ...(leaves ? { leaves } : {}),
      },
      this.record("completed", null, { model: result.model, ...this.uncounted(result.usage), createdAt }),
      this.ctx.events ? [messageCompleted(this.key.accountId, reply)] : [],
    );
    this.recorded = true;
    if (saved && leaves) place!.leftWithExchange();
    if (!saved) {
      // The agent was deleted (and purged) while it was answering: nothing of it may remain, no event either.
      throw new AppError("AGENT_NOT_FOUND", "The agent does not exist.");
    }
    this.ctx.events?.written();
    this.learn(result.text);
    const line = {
      provider: provider.name,
      model: reply.model,
      stream: this.stream,
      latencyMs,
      firstTokenMs: this.firstTokenMs === null ? undefined : Math.round(this.firstTokenMs),
      inputTokens,
      outputTokens,
      finishReason: reply.finishReason,
      ...(reply.toolCalls.length > 0 ? { toolCalls: reply.toolCalls.length } : {}),
    };
    // Written once the reply is on its way: formatting it (pino, with redaction) took tens of microseconds of the
    // reply's path. The request scope, and so the line's requestId, carries over.
    setImmediate(() => this.log.info(line, "message answered"));
    return reply;
  }

  /**
   * Stores the reply of a message a later one interrupted (conversation-queue.ts): the text it had, finish reason
   * `cancelled`, the tokens of the rounds that answered. Nothing is learnt from it.
   */
  async cancelled(text: string): Promise<ReplyRecord> {
    this.interrupted = true;
    if (!this.provider) {
      throw new AppError("AGENT_UNAVAILABLE", "The message was interrupted by a later one before it began.");
    }
    return this.complete({
      text,
      model: this.model ?? "",
      finishReason: "cancelled",
      usage: { ...this.spent },
    });
  }

  /** Starts learning what the exchange told about the user, in the background, when the agent keeps memories. */
  private learn(replyText: string): void {
    const { settings } = specJsonOf(this.input.agent);
    if (this.interrupted || !this.ctx.memories || this.key.userId === "" || !memoryEnabled(settings)) return;
    this.ctx.memories.learn({
      owner: this.key,
      provider: this.provider!,
      model: this.model!,
      messageId: this.messageId,
      userText: this.input.text,
      replyText,
      limit: memoryLimit(settings),
      apiKeyId: this.input.apiKeyId ?? null,
      requestId: this.input.requestId ?? null,
    });
  }

  /**
   * Records a call that stored no reply, with its `message.failed` event unless the caller went away, and returns
   * the public error to end it with. Anything that is not an AppError is a bug: logged with its cause, answered as
   * INTERNAL_ERROR.
   */
  async fail(error: unknown, outcome: Exclude<CallOutcome, "completed">): Promise<AppError> {
    const appError = asAppError(error);
    if (this.recorded) return appError;
    this.recorded = true;
    const fields = {
      provider: this.provider?.name,
      model: this.model ?? undefined,
      stream: this.stream,
      outcome,
      code: appError.code,
      latencyMs: Math.round(performance.now() - this.started),
      ...(appError.cause === undefined ? {} : { cause: describe(appError.cause) }),
    };
    if (appError.code === "INTERNAL_ERROR") this.log.error({ ...fields, err: error }, "message failed");
    else if (outcome === "cancelled") this.log.info(fields, "message cancelled");
    else this.log.warn({ ...fields, error: appError.message }, "message failed");
    const at = new Date();
    const events =
      this.ctx.events && outcome === "failed" ? [messageFailed(this.key, this.id, appError, at)] : [];
    try {
      const recorded = await this.ctx.store.recordCall(
        this.record(outcome, appError, { model: this.model, ...this.uncounted(this.spent), createdAt: at }),
        events,
      );
      if (recorded && events.length > 0) this.ctx.events?.written();
    } catch (storeError) {
      // A database outage is in the store's own outage log; anything else is a bug.
      if (storeError instanceof AppError && storeError.code === "AGENT_UNAVAILABLE")
        this.log.debug({ err: storeError }, "could not record the call");
      else this.log.error({ err: storeError }, "could not record the call");
    }
    return appError;
  }

  /**
   * The tokens of a turn spent since it began or last paused for approval, as a record for the usage rollups
   * (message-runs.ts writes it with the pause): counted then, once, whatever becomes of the message.
   */
  pausedTokens(): CallRecord {
    return this.record("completed", null, {
      model: this.model,
      ...this.uncounted(this.spent),
      createdAt: new Date(),
    });
  }

  /** `usage` less the tokens counted when the turn paused before (a resumed turn's rounds before its pause). */
  private uncounted(usage: { inputTokens: number; outputTokens: number }) {
    const counted = this.input.resume?.counted;
    return {
      inputTokens: Math.max(0, usage.inputTokens - (counted?.inputTokens ?? 0)),
      outputTokens: Math.max(0, usage.outputTokens - (counted?.outputTokens ?? 0)),
    };
  }

  private record(
    outcome: CallOutcome,
    error: AppError | null,
    values: { model: string | null; inputTokens: number; outputTokens: number; createdAt: Date },
  ) {
    // The key's fields one by one: a literal that starts with a spread builds a new hidden class per call (V8 11),
    // about 1 µs for each field after it.
    return {
      accountId: this.key.accountId,
      agentId: this.key.agentId,
      userId: this.key.userId,
      roomId: this.key.roomId,
      id: this.id,
      requestId: this.input.requestId ?? null,
      apiKeyId: this.input.apiKeyId ?? null,
      provider: this.provider?.name ?? null,
      model: values.model,
      stream: this.stream,
      outcome,
      errorCode: outcome === "failed" ? (error?.code ?? null) : null,
      errorMessage: outcome === "failed" ? (error?.message ?? null) : null,
      latencyMs: Math.round(performance.now() - this.started),
      firstTokenMs: this.firstTokenMs === null ? null : Math.round(this.firstTokenMs),
      inputTokens: values.inputTokens,
      outputTokens: values.outputTokens,
      createdAt: values.createdAt.toISOString(),
    };
  }
}

/** A cause for the log: its kind and a message with anything secret-shaped masked. */
function describe(cause: unknown): { name: string; message: string } {
  if (cause instanceof Error) return { name: cause.name, message: sanitise(cause.message) };
  return { name: typeof cause, message: "" };
}
