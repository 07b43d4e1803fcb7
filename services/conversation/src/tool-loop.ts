import { CallDeadline, type DeadlineLimits } from "./deadline.js";
import { incompleteError } from "./providers/errors.js";
import type {
  ModelMessage,
  ModelProvider,
  ModelToolCall,
  ProviderRequest,
  ProviderResult,
  ProviderUsage,
} from "./providers/types.js";
import type { ToolCallRecord, TurnTools } from "./tools.js";

/** What a turn with tools shows as it goes: the text of later rounds, each call as it starts, each outcome. */
export type ToolLoopEvent =
  | { type: "delta"; text: string }
  | {
      type: "tool.call";
      id: string;
      name: string;
      arguments: string;
      /**
       * On a round's first call: the tokens of the model call that made the round's calls. Kept in the run's log
       * only (never sent to callers), so that a process taking the run over counts them.
       */
      spent?: ProviderUsage | undefined;
    }
  | { type: "tool.result"; call: ToolCallRecord };

/**
 * A round of tool calls a run's log already has (a run taken over from a process that stopped, message-runs.ts):
 * the model's text before the calls, the calls, and the outcomes stored, by call (undefined: not stored).
 */
export interface StoredRound {
  text: string;
  calls: ModelToolCall[];
  outcomes: (ToolCallRecord | undefined)[];
  /** The tokens of the model call that made the round's calls, as the log has them (zeros when it has none). */
  spent?: ProviderUsage | undefined;
}

/** A call waiting for a person's approval: as the message's `pendingToolCalls` show it. */
export interface PendingToolCall {
  id: string;
  /** As the model called it: `<plugin>__<tool>`. */
  tool: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
}

/** A person's answer to one pending call (`POST …/messages/{messageId}/approve`). */
export interface ApprovalDecision {
  approve: boolean;
  reason?: string | undefined;
}

/** What a call the person refused tells the model. */
export function refusal(reason: string | undefined): string {
  return reason ? `The person refused this tool call: ${reason}` : "The person refused this tool call.";
}

/** How the rounds end: with the turn's last answer, or paused before calls that wait for approval. */
export type ToolLoopEnd =
  | { result: ProviderResult; toolCalls: ToolCallRecord[] }
  | { paused: PendingToolCall[]; toolCalls: ToolCallRecord[] };

export interface ToolLoopInput {
  tools: TurnTools;
  /** The provider that answered the first call; every later round goes to it. */
  provider: ModelProvider;
  /** The first call's request, the tools included. */
  request: ProviderRequest;
  /** The first call's answer, which asked for tools. */
  first: ProviderResult;
  /** `settings.maxToolSteps`: rounds of tool calls; the call after the last round may call none. */
  maxSteps: number;
  /** The caller's signal: its abort cancels the running tools and the provider call. */
  signal: AbortSignal;
  /** Epoch milliseconds by which the turn must be over: no tool runs past it. */
  turnDeadline: number;
  /** Each later provider call's limits, as the first call had them. */
  limits: DeadlineLimits;
  /** Streamed rounds yield their text as it comes; otherwise each round's text is yielded whole. */
  stream: boolean;
  /** Told of each round's text as it comes. */
  onText?: () => void;
  /** Told of each later provider call's usage once it has answered, so a turn that fails later still counts it. */
  onUsage?: (usage: ProviderResult["usage"]) => void;
  /**
   * The rounds already stored, the first being `first`'s: their stored outcomes are used instead of running the
   * tools again (a tool may have effects), and the answer that followed a round is the next stored one's, without
   * calling the model. Their events are in the log already; only those of what runs now are yielded.
   */
  stored?: readonly StoredRound[];
  /**
   * The person's answers, by call id, to calls that wait for approval (`TurnTools.needsApproval`). A round with
   * such a call unanswered runs none of its calls: the rounds end `paused` with the calls to answer.
   */
  decisions?: ReadonlyMap<string, ApprovalDecision>;
}

/**
 * The rounds of a turn after the model's first answer asked for tools (docs/api/plugins-and-tools.md, "Tools in a turn"): run the
 * calls (concurrently), give the model their outcomes, and call it again, up to `maxSteps` rounds; the call after
 * the last round lists the tools but lets the model call none, so the turn ends in text. Returns the last answer
 * with the text of every round, the usage of every call summed and every call's record.
 */
export async function* toolRounds(input: ToolLoopInput): AsyncGenerator<ToolLoopEvent, ToolLoopEnd> {
  const { tools, provider, signal } = input;
  const messages: ModelMessage[] = [...input.request.messages];
  const records: ToolCallRecord[] = [];
  let result = input.first;
  let text = result.text;
  const usage = { ...result.usage };
  for (let step = 1; step <= input.maxSteps && result.toolCalls?.length; step += 1) {
    const calls = result.toolCalls;
    const stored = input.stored?.[step - 1];
    if (!stored) {
      for (const [i, call] of calls.entries()) {
        yield {
          type: "tool.call",
          id: call.id,
          name: call.name,
          arguments: call.arguments,
          ...(i === 0 ? { spent: result.usage } : {}),
        };
      }
    }
    // Before any call of the round runs: its calls were told, and stored, for the person to decide on.
    const waiting = calls.filter(
      (call, i) => !stored?.outcomes[i] && tools.needsApproval(call.name) && !input.decisions?.has(call.id),
    );
    if (waiting.length > 0) {
      return {
        paused: waiting.map((call) => ({ id: call.id, tool: call.name, arguments: call.arguments })),
        toolCalls: records,
      };
    }
    const outcomes: ToolCallRecord[] = new Array(calls.length);
    const running = new Map<number, Promise<{ i: number; outcome: ToolCallRecord }>>();
    calls.forEach((call, i) => {
      const kept = stored?.outcomes[i];
      const decision = tools.needsApproval(call.name) ? input.decisions?.get(call.id) : undefined;
      if (kept) outcomes[i] = kept;
      else if (decision && !decision.approve) {
        const refused = { ...call, ok: false, error: refusal(decision.reason) };
        running.set(i, Promise.resolve({ i, outcome: refused }));
      } else
        running.set(
          i,
          tools.run(call, signal, input.turnDeadline).then((outcome) => ({ i, outcome })),
        );
    });
    // Outcomes are told as they come; the model gets them in the order of its calls.
    while (running.size > 0) {
      const { i, outcome } = await Promise.race(running.values());
      running.delete(i);
      outcomes[i] = outcome;
      yield { type: "tool.result", call: outcome };
    }
    records.push(...outcomes);
    messages.push(
      { role: "assistant", text: result.text, toolCalls: calls },
      {
        role: "tool",
        results: outcomes.map((outcome) => ({
          callId: outcome.id,
          name: outcome.name,
          content: outcome.ok ? (outcome.output ?? "null") : (outcome.error ?? "The tool failed."),
          isError: !outcome.ok,
        })),
      },
    );
    const request: ProviderRequest = {
      ...input.request,
      messages: [...messages],
      toolChoice: step < input.maxSteps ? "auto" : "none",
    };
    const next = input.stored?.[step];
    if (next) {
      // The model's answer to this round is in the log: the next round's text and calls.
      result = {
        text: next.text,
        model: result.model,
        finishReason: "other",
        usage: next.spent ?? { inputTokens: 0, outputTokens: 0 },
        toolCalls: next.calls,
      };
      // Spent by the process that stored the round: counted, though not spent again.
      input.onUsage?.(result.usage);
      text += result.text;
      usage.inputTokens += result.usage.inputTokens;
      usage.outputTokens += result.usage.outputTokens;
      continue;
    }
    result = yield* round(provider, request, signal, input);
    input.onUsage?.(result.usage);
    text += result.text;
    usage.inputTokens += result.usage.inputTokens;
    usage.outputTokens += result.usage.outputTokens;
  }
  // Calls the model made after its last round (told it could make none) are not run.
  const { toolCalls: _, ...last } = result;
  return { result: { ...last, text, usage }, toolCalls: records };
}

/** The value a generator returns, its events passed over (a turn that is not streamed shows none). */
export async function drained<R>(generator: AsyncGenerator<unknown, R>): Promise<R> {
  for (;;) {
    const next = await generator.next();
    if (next.done) return next.value;
  }
}

/** One more provider call, under a deadline of its own as every call has. */
async function* round(
  provider: ModelProvider,
  request: ProviderRequest,
  signal: AbortSignal,
  { limits, stream, onText }: Pick<ToolLoopInput, "limits" | "stream" | "onText">,
): AsyncGenerator<ToolLoopEvent, ProviderResult> {
  const deadline = new CallDeadline(signal, limits);
  try {
    if (!stream) {
      const result = await provider.complete(request, deadline.signal);
      if (result.text) {
        onText?.();
        yield { type: "delta", text: result.text };
      }
      return result;
    }
    let text = "";
    let result: ProviderResult | undefined;
    // Read to the end, not left at `done`: the connection then serves the next call.
    for await (const event of await provider.stream(request, deadline.signal)) {
      if (event.type === "done") {
        const { type: _, ...done } = event;
        result = { text, ...done };
        continue;
      }
      if (event.type === "tool") {
        deadline.firstToken();
        continue;
      }
      deadline.firstToken();
      onText?.();
      text += event.text;
      yield { type: "delta", text: event.text };
    }
    if (!result) throw deadline.abortError(provider.name) ?? incompleteError(provider.name);
    return result;
  } catch (error) {
    throw deadline.abortError(provider.name) ?? error;
  } finally {
    deadline.dispose();
  }
}
