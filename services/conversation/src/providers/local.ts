import { basename } from "node:path";
import { AppError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import { DEFAULT_LOCAL_MODEL } from "../models/catalog.js";
import { LocalModelError, type ModelLocation } from "../models/resolve.js";
import { sanitise } from "./errors.js";
import { type Generation, type LoadedModel, LocalEngine, type LocalGpu } from "./local/engine.js";
import { TurnQueue } from "./local/queue.js";
import type { ModelProvider, ProviderEvent, ProviderRequest, ProviderResult } from "./types.js";

export const DEFAULT_LOCAL_MAX_QUEUE = 8;
/**
 * How long a local reply may take, its wait for the model included: well inside the 30 s a client waits by
 * default (the SDKs' timeout; docs/api/providers.md, "Providers"), on two busy cores.
 */
export const DEFAULT_LOCAL_REPLY_TIMEOUT_MS = 20_000;
/**
 * The most tokens a local reply has when the agent sets no `settings.maxTokens`. On a 2-core machine with both
 * cores busy the default model wrote a median 6.5 tokens/s (docs/benchmarks.md, "Local model under load"), so
 * this many end about when the time limit would; most answers are shorter and end well before.
 */
export const DEFAULT_LOCAL_MAX_TOKENS = 128;

export interface LocalProviderOptions {
  /** LOCAL_MODEL_PATH, or the model directory where the default model is cached and fetched to. */
  location: ModelLocation;
  /** LOCAL_MAX_QUEUE: requests that may wait while one generates; more are refused with AGENT_UNAVAILABLE. */
  maxQueue: number;
  /** LOCAL_GPU: "auto" (a GPU build when one is installed and works, else the CPU) or false (the CPU). */
  gpu: LocalGpu;
  /** LOCAL_THREADS: 0 takes half the cores. */
  threads: number;
  /** LOCAL_CONTEXT_SIZE in tokens: 0 takes the model's own, up to 8192. */
  contextSize: number;
  /**
   * LOCAL_REPLY_TIMEOUT_MS: how long a reply may take from the moment the model is loaded, the wait for its
   * turn included. When it passes the reply ends with what was generated so far, finished with `length`.
   */
  replyTimeoutMs: number;
  /** LOCAL_MAX_TOKENS: the most tokens a reply has when the agent sets no `settings.maxTokens`. */
  defaultMaxTokens: number;
  logger: Logger;
  /** Where a first-use download draws its progress bar; undefined logs the progress instead. */
  terminal?: NodeJS.WriteStream | undefined;
}

export interface LocalProviderStats {
  /** Generations running (0 or 1) and requests waiting for their turn. */
  active: number;
  waiting: number;
  /** Tokens generated since the provider was made, replies cut short included. */
  generatedTokens: number;
}

/** The `local` provider, plus what the composition root and tests need of an in-process model. */
export interface LocalProvider extends ModelProvider {
  /** Loads the model now instead of on the first message; throws MODEL_ERROR when it cannot be had. */
  warmUp(): Promise<void>;
  stats(): LocalProviderStats;
  /** Frees the model. Calls in flight end first (the caller stops serving before closing). */
  close(): Promise<void>;
}

const HOSTED_HINT =
  "To use a hosted model instead, set DEFAULT_MODEL_PROVIDER=openai with OPENAI_API_KEY (or OPENAI_BASE_URL " +
  "for an OpenAI-compatible server such as Ollama), or DEFAULT_MODEL_PROVIDER=anthropic with ANTHROPIC_API_KEY.";

/**
 * The `local` provider: a GGUF chat model run in this process by llama.cpp (node-llama-cpp), with the chat
 * template the model file carries. The model is loaded once, on first use, and shared; generations take turns
 * on its one context in arrival order, and a request that finds the queue full is refused at once. Text is
 * streamed token by token; aborting the signal stops generation before the next token.
 */
export function createLocalProvider(options: LocalProviderOptions): LocalProvider {
  const engine = new LocalEngine(options);
  const queue = new TurnQueue(options.maxQueue);
  const defaultModel = options.location.path
    ? basename(options.location.path).replace(/\.gguf$/i, "")
    : (options.location.model ?? DEFAULT_LOCAL_MODEL).name;
  let generatedTokens = 0;

  const load = async (): Promise<LoadedModel> => {
    try {
      return await engine.load();
    } catch (error) {
      throw loadError(error, options.location);
    }
  };

  async function start(request: ProviderRequest, signal: AbortSignal): Promise<AsyncIterable<ProviderEvent>> {
    if (request.model.toLowerCase() !== defaultModel.toLowerCase()) {
      throw new AppError(
        "MODEL_ERROR",
        `The local provider serves one model, "${defaultModel}" (LOCAL_MODEL_PATH chooses it); the agent asks ` +
          `for "${request.model}". Unset the agent's model or set it to "${defaultModel}".`,
      );
    }
    const loaded = await load();
    // The reply's time runs from here: loading (a first-use download included) is not the reply's.
    const deadline = replyDeadline(options.replyTimeoutMs);
    const release = await queue
      .acquire(AbortSignal.any([signal, deadline.signal]))
      .catch((error: unknown) => {
        deadline.clear();
        throw signal.aborted ? error : (deadline.signal.reason ?? error);
      });
    // Generation stops when the caller aborts, and also when it stops reading the events.
    const generation = new AbortController();
    const onAbort = () => generation.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    const events = new EventChannel(() => generation.abort());
    let counted = 0;
    engine
      .generate(loaded, request, {
        signal: generation.signal,
        deadline: deadline.signal,
        onText: (text) => events.push({ type: "delta", text }),
        onTokens: (generated) => {
          generatedTokens += generated - counted;
          counted = generated;
        },
      })
      .then((generation: Generation) => {
        events.push({
          type: "done",
          model: loaded.name,
          finishReason: generation.finishReason,
          usage: { inputTokens: generation.inputTokens, outputTokens: generation.outputTokens },
          ...(generation.toolCalls.length > 0 ? { toolCalls: generation.toolCalls } : {}),
        });
        events.end();
      })
      .catch((error: unknown) => {
        events.fail(
          generation.signal.aborted || error instanceof AppError
            ? error
            : new AppError("AGENT_UNAVAILABLE", "The local model failed while answering. Retry shortly.", {
                cause: error,
              }),
        );
      })
      .finally(() => {
        signal.removeEventListener("abort", onAbort);
        deadline.clear();
        release();
      });
    return events;
  }

  return {
    name: "local",
    defaultModel,
    defaultMaxTokens: options.defaultMaxTokens,
    stream: start,

    async complete(request, signal): Promise<ProviderResult> {
      let text = "";
      for await (const event of await start(request, signal)) {
        if (event.type === "delta") text += event.text;
        else if (event.type === "done") {
          const { type: _, ...done } = event;
          return { text, ...done };
        }
      }
      throw new AppError("AGENT_UNAVAILABLE", "The local model stopped before the reply was complete.");
    },

    async warmUp() {
      await load();
    },

    stats() {
      return { ...queue.size, generatedTokens };
    },

    close: () => engine.close(),
  };
}

/**
 * The signal that ends a reply's time. Its reason is the error for a reply that had generated nothing by then:
 * it waited for its turn, or the model did not start, for the whole time.
 */
function replyDeadline(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(
      new AppError(
        "AGENT_UNAVAILABLE",
        `The local model could not start this reply within ${seconds(ms)} (LOCAL_REPLY_TIMEOUT_MS): it is busy ` +
          "with other replies or the machine is overloaded. Retry shortly.",
        { retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) },
      ),
    );
  }, ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${ms / 1000} s`;
}

function loadError(error: unknown, location: ModelLocation): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof LocalModelError) {
    return new AppError("MODEL_ERROR", `${error.message} ${HOSTED_HINT}`, { cause: error });
  }
  // The file was there but llama.cpp could not load it: truncated, or an architecture it does not know.
  const reason = error instanceof Error ? sanitise(error.message) : "unknown error";
  const what = location.path ? `LOCAL_MODEL_PATH (${location.path})` : `the model in ${location.dir}`;
  return new AppError(
    "MODEL_ERROR",
    `The local model could not be loaded from ${what}: ${reason}. Check that the file is a complete GGUF chat ` +
      `model that llama.cpp supports. ${HOSTED_HINT}`,
    { cause: error },
  );
}

/**
 * The events of one reply, pushed by the generation as it goes and read by the caller at its own pace.
 * `onLeave` runs when the reader stops before the end, to stop the generation.
 */
class EventChannel implements AsyncIterable<ProviderEvent> {
  private readonly buffered: ProviderEvent[] = [];
  private ended = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly onLeave: () => void) {}

  push(event: ProviderEvent): void {
    this.buffered.push(event);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ProviderEvent> {
    try {
      for (;;) {
        const event = this.buffered.shift();
        if (event) {
          yield event;
          continue;
        }
        if (this.failure) throw this.failure.error;
        if (this.ended) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      if (!this.ended && !this.failure) this.onLeave();
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
