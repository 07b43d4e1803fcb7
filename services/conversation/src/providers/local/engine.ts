import { availableParallelism } from "node:os";
import type { Logger } from "@agentry/logging";
import type {
  ChatHistoryItem,
  ChatModelFunctionCall,
  ChatModelFunctions,
  ChatModelResponse,
  GbnfJsonSchema,
  Llama,
  LlamaChat,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaLogLevel,
  LlamaModel,
} from "node-llama-cpp";
import { type EnsureModelOptions, ensureModel, type ModelLocation } from "../../models/resolve.js";
import type { FinishReason, ModelTool, ModelToolCall, ProviderRequest } from "../types.js";
import { LoopDetector } from "./repetition.js";

export type LocalGpu = "auto" | false;

export interface LocalEngineOptions {
  location: ModelLocation;
  /** "auto" uses a GPU build when one is installed and works, else the CPU; false always the CPU. */
  gpu: LocalGpu;
  /** Threads of the one context; 0 takes half the cores (see `defaultThreads`). */
  threads: number;
  /** Tokens the context holds (prompt and reply); 0 takes the model's training context, up to 8192. */
  contextSize: number;
  logger: Logger;
  /** Where a first-use download draws its progress bar; undefined logs the progress instead. */
  terminal?: NodeJS.WriteStream | undefined;
}

/**
 * Sampling when the agent sets no temperature: the values SmolLM2's authors suggest. A greedy (0) small model
 * easily loops on one phrase.
 */
export const LOCAL_DEFAULT_TEMPERATURE = 0.2;
export const LOCAL_DEFAULT_TOP_P = 0.9;
/**
 * Lowers the likelihood of the tokens of the last 64 once more: node-llama-cpp's default (1.1) still let the
 * default model repeat one list item or phrase to the token limit on several everyday prompts, 1.15 did not
 * (docs/benchmarks.md, "Local model under load"). The loop detector ends what gets through.
 */
export const LOCAL_REPEAT_PENALTY = { lastTokens: 64, penalty: 1.15 } as const;

const MAX_CONTEXT_SIZE = 8192;
/** The most tokens a forced call's JSON may take; a call cut off there is reported to the model as unreadable. */
const MAX_CALL_TOKENS = 512;
const MAX_CACHED_GRAMMARS = 32;
/**
 * The longest string a forced call's arguments may hold where the tool's schema sets no bound: a small model
 * under greedy sampling can repeat itself inside a string until the token limit, and a bound closes the string.
 */
const MAX_CALL_STRING_LENGTH = 200;

/** The loaded model: one context with one sequence, which generations take turns on. */
export interface LoadedModel {
  name: string;
  path: string;
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  chat: LlamaChat;
  /** The chat template in use, as node-llama-cpp names it (resolved from the GGUF's own template). */
  template: string;
  gpu: string | false;
}

/** One generation's turn on the model: what stops it and where its output goes. */
export interface Turn {
  /** The caller's: generation stops before the next token and `generate` rejects with its reason. */
  signal: AbortSignal;
  /**
   * The reply's time limit: generation stops and the reply is what was generated so far. When nothing was,
   * `generate` rejects with this signal's reason.
   */
  deadline: AbortSignal;
  onText(text: string): void;
  onTokens?(generated: number): void;
}

export interface Generation {
  text: string;
  finishReason: FinishReason;
  inputTokens: number;
  outputTokens: number;
  /** The functions the model called (node-llama-cpp's function calling), when the request offered tools. */
  toolCalls: ModelToolCall[];
}

/**
 * The model, loaded on first use (or on `load()` at start) and shared by every call. Loading fails with
 * LocalModelError when the file cannot be had; a failed load is tried again by the next call, so fixing the
 * file needs no restart.
 */
export class LocalEngine {
  private loading: Promise<LoadedModel> | undefined;
  private closed = false;
  /** Grammars of forced calls by their schema, the oldest dropped first. */
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(private readonly options: LocalEngineOptions) {}

  load(): Promise<LoadedModel> {
    if (this.closed) return Promise.reject(new Error("the local model was closed"));
    if (!this.loading) {
      this.loading = this.loadOnce();
      this.loading.catch(() => {
        this.loading = undefined;
      });
    }
    return this.loading;
  }

  /**
   * One reply on the shared sequence; the caller makes sure generations take turns. `onText` receives the
   * text as it is produced and `onTokens` the count so far. When `signal` aborts, generation stops before the
   * next token and this rejects with the signal's reason. When `deadline` aborts, or the reply falls into a
   * loop, generation stops too and the reply is what was generated so far, finished with `length`; a deadline
   * that passes before the first token rejects with AGENT_UNAVAILABLE instead, since there is no reply.
   */
  async generate(loaded: LoadedModel, request: ProviderRequest, turn: Turn): Promise<Generation> {
    if (request.toolChoice === "required" && request.tools?.length) {
      return this.generateCall(loaded, request, turn);
    }
    const history = chatHistory(request);
    const functions = chatFunctions(request);
    const inputTokens = loaded.chat.chatWrapper
      .generateContextState({ chatHistory: history, ...(functions ? { availableFunctions: functions } : {}) })
      .contextText.tokenize(loaded.model.tokenizer).length;
    let outputTokens = 0;
    const stop = new Stop(turn);
    const loops = new LoopDetector();
    const temperature = request.temperature ?? LOCAL_DEFAULT_TEMPERATURE;
    const result = await loaded.chat.generateResponse(history, {
      maxTokens: request.maxTokens,
      temperature,
      ...(temperature > 0 ? { topP: LOCAL_DEFAULT_TOP_P } : {}),
      repeatPenalty: LOCAL_REPEAT_PENALTY,
      // The model's chat template says how it calls functions; a grammar keeps the calls' parameters valid.
      ...(functions ? { functions, documentFunctionParams: true } : {}),
      signal: stop.signal,
      stopOnAbortSignal: true,
      onTextChunk: (text) => {
        if (text) turn.onText(text);
      },
      onToken: (tokens) => {
        outputTokens += tokens.length;
        turn.onTokens?.(outputTokens);
        if (loops.push(tokens)) stop.loop();
      },
    });
    const cut = stop.cut(result.metadata.stopReason, outputTokens, this.options.logger);
    const stamp = Date.now().toString(36);
    return {
      text: result.response,
      finishReason: cut || result.metadata.stopReason === "maxTokens" ? "length" : "stop",
      inputTokens,
      outputTokens,
      toolCalls: (result.functionCalls ?? []).map((call, i) => ({
        id: `call_${stamp}_${i}`,
        name: call.functionName,
        arguments: JSON.stringify(call.params ?? {}),
      })),
    };
  }

  /**
   * A call the model must make (`toolChoice: required`). node-llama-cpp's function calling leaves the choice to
   * the model, and a small one rarely takes it; here a grammar admits nothing but one call, `{"name", "arguments"}`,
   * with the arguments as the chosen tool's schema has them, and greedy sampling picks the likeliest. A call cut
   * off by the deadline is reported to the model as unreadable, as one cut off by its token bound is.
   */
  private async generateCall(loaded: LoadedModel, request: ProviderRequest, turn: Turn): Promise<Generation> {
    const tools = request.tools ?? [];
    const history = chatHistory({ ...request, system: callInstructions(request.system, tools) });
    const inputTokens = loaded.chat.chatWrapper
      .generateContextState({ chatHistory: history })
      .contextText.tokenize(loaded.model.tokenizer).length;
    let outputTokens = 0;
    const grammar = await this.callGrammar(loaded, tools);
    const stop = new Stop(turn);
    const result = await loaded.chat.generateResponse(history, {
      grammar,
      // The call is not the reply: the reply's own bound (settings.maxTokens) would cut it off.
      maxTokens: MAX_CALL_TOKENS,
      temperature: 0,
      signal: stop.signal,
      stopOnAbortSignal: true,
      onToken: (tokens) => {
        outputTokens += tokens.length;
        turn.onTokens?.(outputTokens);
      },
    });
    stop.cut(result.metadata.stopReason, outputTokens, this.options.logger);
    return {
      text: "",
      finishReason: "stop",
      inputTokens,
      outputTokens,
      toolCalls: [{ id: `call_${Date.now().toString(36)}_0`, ...parseCall(result.response, tools) }],
    };
  }

  /** The grammar of one call to one of `tools`, made once per set of tools. */
  private callGrammar(loaded: LoadedModel, tools: readonly ModelTool[]): Promise<LlamaGrammar> {
    const schema: { readonly oneOf: readonly GbnfJsonSchema[] } = {
      oneOf: tools.map(
        (tool): GbnfJsonSchema => ({
          type: "object",
          properties: {
            name: { const: tool.name },
            arguments: grammarSchema(tool.inputSchema, { maxStringLength: MAX_CALL_STRING_LENGTH }),
          },
          required: ["name", "arguments"],
        }),
      ),
    };
    const key = JSON.stringify(schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = loaded.model.llama.createGrammarForJsonSchema(schema);
      grammar.catch(() => this.grammars.delete(key));
      if (this.grammars.size >= MAX_CACHED_GRAMMARS) {
        this.grammars.delete(this.grammars.keys().next().value as string);
      }
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  /** Frees the model and its context. The llama.cpp runtime itself stays for the life of the process. */
  async close(): Promise<void> {
    this.closed = true;
    const loading = this.loading;
    this.loading = undefined;
    const loaded = await loading?.catch(() => undefined);
    if (!loaded) return;
    await loaded.context.dispose();
    await loaded.model.dispose();
  }

  private async loadOnce(): Promise<LoadedModel> {
    const { logger } = this.options;
    const startedAt = performance.now();
    const ensureOptions: EnsureModelOptions = { logger, terminal: this.options.terminal };
    const file = await ensureModel(this.options.location, ensureOptions);
    const llama = await runtime(this.options.gpu, logger);
    const model = await llama.loadModel({ modelPath: file.path });
    try {
      const contextSize = Math.min(
        this.options.contextSize || Math.min(model.trainContextSize, MAX_CONTEXT_SIZE),
        model.trainContextSize,
      );
      const context = await model.createContext({
        sequences: 1,
        contextSize,
        threads: this.options.threads || defaultThreads(),
      });
      const sequence = context.getSequence();
      const { LlamaChat } = await llamaCpp();
      const chat = new LlamaChat({ contextSequence: sequence });
      const loaded: LoadedModel = {
        name: file.name,
        path: file.path,
        model,
        context,
        sequence,
        chat,
        template: chat.chatWrapper.wrapperName,
        gpu: llama.gpu,
      };
      logger.info(
        {
          model: file.name,
          path: file.path,
          template: loaded.template,
          gpu: llama.gpu,
          threads: context.currentThreads,
          contextSize: context.contextSize,
          loadMs: Math.round(performance.now() - startedAt),
        },
        "local model loaded",
      );
      if (this.closed) {
        await context.dispose();
        throw new Error("the local model was closed");
      }
      return loaded;
    } catch (error) {
      await model.dispose();
      throw error;
    }
  }
}

/**
 * The one signal a generation runs under, which the caller, the deadline and a loop each abort. node-llama-cpp
 * returns what it has when it aborts (`stopOnAbortSignal`); `cut` says afterwards which of them it was.
 */
class Stop {
  readonly signal: AbortSignal;
  private readonly loops = new AbortController();

  constructor(private readonly turn: Turn) {
    this.signal = AbortSignal.any([turn.signal, turn.deadline, this.loops.signal]);
  }

  /** The reply fell into a loop: it ends here. */
  loop(): void {
    this.loops.abort();
  }

  /**
   * Whether generation was cut short by the deadline or a loop. Throws the caller's reason when the caller
   * aborted, and the deadline's when it passed before anything was generated.
   */
  cut(stopReason: string, generated: number, logger: Logger): boolean {
    if (stopReason !== "abort") return false;
    if (this.turn.signal.aborted) throw this.turn.signal.reason;
    const why = this.loops.signal.aborted ? "loop" : "deadline";
    if (why === "deadline" && generated === 0) throw this.turn.deadline.reason;
    logger.info({ why, generated }, "local reply cut short");
    return true;
  }
}

/**
 * Half the cores, at least one. llama.cpp's threads spin while they wait for each other, so more threads than
 * idle cores makes generation many times slower (measured on 2 busy cores: 1 thread 20-25 tokens/s, 2 threads
 * 2-6); the other half is left to the service and the database.
 */
export function defaultThreads(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

/**
 * The llama.cpp runtime, one per process: its native bindings are process-wide, so every engine shares one
 * instance and none disposes it. Only prebuilt binaries from the npm packages are used; nothing is built or
 * downloaded at run time.
 */
const runtimes = new Map<string, Promise<Llama>>();

/**
 * node-llama-cpp takes about a second to import (hundreds of modules), which every process start would pay even
 * when no agent uses the local model; it is imported when a model is first loaded instead.
 */
let bindings: Promise<typeof import("node-llama-cpp")> | undefined;
function llamaCpp(): Promise<typeof import("node-llama-cpp")> {
  bindings ??= import("node-llama-cpp");
  return bindings;
}

function runtime(gpu: LocalGpu, logger: Logger): Promise<Llama> {
  const key = String(gpu);
  let llama = runtimes.get(key);
  if (!llama) {
    llama = startRuntime(gpu, logger);
    runtimes.set(key, llama);
    llama.catch(() => runtimes.delete(key));
  }
  return llama;
}

async function startRuntime(gpu: LocalGpu, logger: Logger): Promise<Llama> {
  const { getLlama, LlamaLogLevel } = await llamaCpp();
  const log = logger.child({ component: "llama.cpp" });
  const common = {
    build: "never",
    skipDownload: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.warn,
    logger: (level: LlamaLogLevel, message: string) => {
      const text = message.trim();
      if (!text) return;
      if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal) log.error(text);
      else if (level === LlamaLogLevel.warn) log.warn(text);
      else log.debug(text);
    },
  } as const;
  if (gpu === "auto") {
    try {
      return await getLlama({ ...common, gpu: "auto" });
    } catch (error) {
      logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        "no usable GPU build of llama.cpp; using the CPU",
      );
    }
  }
  return getLlama({ ...common, gpu: false });
}

/**
 * The request as node-llama-cpp's chat history, ending with the model turn to be generated: an empty one, or,
 * after a round of tool calls, the model turn that made them, their results in place, for the model to continue.
 */
export function chatHistory(request: ProviderRequest): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = [];
  if (request.system) items.push({ type: "system", text: request.system });
  const calls = new Map<string, ChatModelFunctionCall>();
  let continuing = false;
  for (const message of request.messages) {
    continuing = false;
    if (message.role === "user") {
      items.push({ type: "user", text: message.text });
    } else if (message.role === "tool") {
      for (const result of message.results) {
        const call = calls.get(result.callId);
        if (call) call.result = result.isError ? { error: result.content } : parseOr(result.content);
      }
      continuing = items.at(-1)?.type === "model";
    } else {
      const response: ChatModelResponse["response"] = message.text ? [message.text] : [];
      if ("toolCalls" in message) {
        for (const toolCall of message.toolCalls) {
          const call: ChatModelFunctionCall = {
            type: "functionCall",
            name: toolCall.name,
            params: parseOr(toolCall.arguments),
            result: undefined,
          };
          calls.set(toolCall.id, call);
          response.push(call);
        }
      }
      // The rounds of one turn are one model turn that goes on after each round's results.
      const last = items.at(-1);
      if ("toolCalls" in message && last?.type === "model" && calls.size > message.toolCalls.length) {
        last.response.push(...response);
      } else {
        items.push({ type: "model", response });
      }
    }
  }
  if (!continuing) items.push({ type: "model", response: [] });
  return items;
}

/** The system prompt with the tools listed and the form of the one call the model is to make. */
export function callInstructions(system: string | undefined, tools: readonly ModelTool[]): string {
  return [
    ...(system ? [system, ""] : []),
    'Call one of these tools to answer. Answer with one JSON object such as {"name": "tool_name", "arguments": {"key": "value"}}.',
    "Tools:",
    ...tools.map((tool) => `- ${tool.name}(${signature(tool.inputSchema)}): ${tool.description}`),
  ].join("\n");
}

/**
 * A tool's arguments as a small model reads them best, `zone: string, hours?: integer`: names, types and
 * descriptions, without the schema's patterns and bounds (which such a model copies instead of following).
 */
function signature(schema: unknown): string {
  const { properties, required } = (schema ?? {}) as { properties?: unknown; required?: unknown };
  if (typeof properties !== "object" || properties === null) return "";
  const needed = new Set(Array.isArray(required) ? required : []);
  return Object.entries(properties as Record<string, { type?: unknown; description?: unknown }>)
    .map(([name, property]) => {
      const type = Array.isArray(property?.type)
        ? property.type.join(" | ")
        : String(property?.type ?? "any");
      const note = typeof property?.description === "string" ? ` (${property.description})` : "";
      return `${name}${needed.has(name) ? "" : "?"}: ${type}${note}`;
    })
    .join(", ");
}

/**
 * The call in a forced answer. The grammar makes it one of the tools' with valid arguments; an answer cut off by
 * the token limit keeps the tool's name and arguments the tool refuses, so the model is told and goes on.
 */
export function parseCall(text: string, tools: readonly ModelTool[]): { name: string; arguments: string } {
  try {
    const call = JSON.parse(text) as { name?: unknown; arguments?: unknown };
    if (typeof call.name === "string")
      return { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) };
  } catch {
    // Cut off: fall through.
  }
  const named = /"name"\s*:\s*"([^"]*)"/.exec(text)?.[1];
  const name = tools.find((tool) => tool.name === named)?.name ?? tools[0]?.name ?? "";
  return { name, arguments: JSON.stringify({ unreadable: text.slice(0, 200) }) };
}

/** The request's tools as node-llama-cpp functions, unless there are none to call. */
function chatFunctions(request: ProviderRequest): ChatModelFunctions | undefined {
  if (!request.tools?.length || request.toolChoice === "none") return undefined;
  const functions: Record<string, { description: string; params: GbnfJsonSchema }> = {};
  for (const tool of request.tools) {
    functions[tool.name] = { description: tool.description, params: grammarSchema(tool.inputSchema) };
  }
  return functions;
}

const GRAMMAR_FORMATS = new Set(["date-time", "time", "date"]);

/**
 * The part of a JSON Schema that node-llama-cpp turns into a grammar (types, properties, required, items, enum,
 * const, oneOf/anyOf, lengths): other keywords (numeric bounds, patterns, formats it does not know) are left to
 * the tool's own validation, which reports them to the model.
 */
export function grammarSchema(schema: unknown, options: { maxStringLength?: number } = {}): GbnfJsonSchema {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return {} as GbnfJsonSchema;
  const source = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ["type", "enum", "const", "description", "required", "minLength", "maxLength"]) {
    if (source[key] !== undefined) out[key] = source[key];
  }
  for (const key of ["minItems", "maxItems"]) if (source[key] !== undefined) out[key] = source[key];
  if (typeof source.format === "string" && GRAMMAR_FORMATS.has(source.format)) out.format = source.format;
  if (options.maxStringLength !== undefined && source.type === "string" && out.format === undefined) {
    const bound = typeof source.maxLength === "number" ? source.maxLength : Number.POSITIVE_INFINITY;
    out.maxLength = Math.min(bound, options.maxStringLength);
  }
  if (typeof source.properties === "object" && source.properties !== null) {
    out.properties = Object.fromEntries(
      Object.entries(source.properties as Record<string, unknown>).map(([name, value]) => [
        name,
        grammarSchema(value, options),
      ]),
    );
  }
  if (typeof source.additionalProperties === "boolean")
    out.additionalProperties = source.additionalProperties;
  else if (source.additionalProperties)
    out.additionalProperties = grammarSchema(source.additionalProperties, options);
  if (source.items !== undefined) out.items = grammarSchema(source.items, options);
  for (const key of ["oneOf", "anyOf"]) {
    if (Array.isArray(source[key]))
      out.oneOf = (source[key] as unknown[]).map((item) => grammarSchema(item, options));
  }
  return out as GbnfJsonSchema;
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
