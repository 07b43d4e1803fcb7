import type { CreateEmbeddingResponse, EmbeddingCreateParams } from "openai/resources/embeddings";
import { incompleteError } from "./providers/errors.js";
import { createEndpoint, type ErrorDetail } from "./providers/http.js";
import { OPENAI_DEFAULT_BASE_URL } from "./providers/openai.js";

/** What turns texts into vectors for memories' recall by meaning (docs/api/memories.md, "Recall"). */
export interface Embedder {
  /** The model named in requests; vectors of different models are never compared. */
  readonly model: string;
  /** One unit-length vector per text, in order. Throws the provider errors of `providers/errors.ts`. */
  embed(texts: readonly string[], signal: AbortSignal): Promise<Float32Array[]>;
}

export const EMBEDDINGS_PROVIDERS = ["openai"] as const;
export type EmbeddingsProviderName = (typeof EMBEDDINGS_PROVIDERS)[number];

export const DEFAULT_EMBEDDINGS_MODEL = "text-embedding-3-small";

/** How long one embeddings call may take: a recall waits for the message's vector before the reply starts. */
export const DEFAULT_EMBEDDINGS_TIMEOUT_MS = 5_000;

export interface EmbeddingsConfig {
  provider: EmbeddingsProviderName;
  model: string;
  /** Any server speaking OpenAI's `POST /embeddings`; the OpenAI API when unset. */
  baseURL?: string;
  apiKey?: string;
  /** Asked of models that can shorten their vectors (OpenAI's text-embedding-3); unset: the model's own size. */
  dimensions?: number;
  timeoutMs: number;
}

/**
 * The `openai` embeddings provider: `POST {baseURL}/embeddings` as OpenAI defines it, so any compatible server
 * (Ollama, vLLM, LM Studio, llama.cpp's server) works. Vectors are scaled to unit length, so that a cosine
 * distance and a dot product rank them alike whatever the server returns.
 */
export function createOpenAIEmbedder(config: Omit<EmbeddingsConfig, "provider">): Embedder {
  const endpoint = createEndpoint({
    provider: "openai",
    baseURL: config.baseURL ?? OPENAI_DEFAULT_BASE_URL,
    path: "/embeddings",
    headers: { authorization: `Bearer ${config.apiKey ?? "unused"}` },
    timeoutMs: config.timeoutMs,
    secrets: config.apiKey ? [config.apiKey] : [],
    errorDetail,
  });
  return {
    model: config.model,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const body: EmbeddingCreateParams = {
        model: config.model,
        input: [...texts],
        encoding_format: "float",
        ...(config.dimensions ? { dimensions: config.dimensions } : {}),
      };
      const answer = (await endpoint.json(body, config.model, signal)) as CreateEmbeddingResponse | null;
      const data = answer?.data;
      if (!Array.isArray(data) || data.length !== texts.length) {
        throw incompleteError("openai", new Error(`expected ${texts.length} embeddings`));
      }
      const vectors: Float32Array[] = new Array(texts.length);
      for (const [position, item] of data.entries()) {
        const index = typeof item?.index === "number" ? item.index : position;
        if (
          !Array.isArray(item?.embedding) ||
          index < 0 ||
          index >= texts.length ||
          item.embedding.length === 0
        ) {
          throw incompleteError("openai", new Error("an embedding is not a list of numbers"));
        }
        vectors[index] = unitVector(item.embedding);
      }
      return vectors;
    },
  };
}

/** The embedder of the configuration, or undefined without one (memories are then recalled by full text). */
export function createEmbedder(config: EmbeddingsConfig | undefined): Embedder | undefined {
  if (!config) return undefined;
  const { provider: _provider, ...options } = config;
  return createOpenAIEmbedder(options);
}

/** `values` scaled to length 1 (a zero vector stays zero). */
export function unitVector(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}

function errorDetail(body: unknown): ErrorDetail {
  const error = (body as { error?: { type?: unknown; code?: unknown; message?: unknown } } | undefined)
    ?.error;
  const code = error?.code;
  const type = error?.type;
  return {
    type: typeof code === "string" ? code : typeof type === "string" ? type : undefined,
    message: typeof error?.message === "string" ? error.message : undefined,
  };
}
