import type { ProviderName } from "@agentry/core";

/**
 * The `modelProvider` values of elizaOS character files (v0.x's `ModelProviderName`) that an agent here can be
 * answered through, and the provider that answers. `anthropic` is the Messages API; `llama_local` (a model run
 * in-process) is `local`; the rest serve OpenAI's Chat Completions API, so the `openai` provider answers them once
 * `OPENAI_BASE_URL` points at that service. Values left out need a protocol no provider here speaks (Vertex and
 * Bedrock authentication) or are not text models (fal.ai, LetzAI, Livepeer's image pipeline); a file naming one
 * is refused rather than imported into an agent that could never answer.
 */
export const ELIZA_MODEL_PROVIDERS = {
  openai: "openai",
  anthropic: "anthropic",
  llama_local: "local",
  akash_chat_api: "openai",
  ali_bailian: "openai",
  atoma: "openai",
  deepseek: "openai",
  eternalai: "openai",
  galadriel: "openai",
  gaianet: "openai",
  google: "openai",
  grok: "openai",
  groq: "openai",
  heurist: "openai",
  hyperbolic: "openai",
  infera: "openai",
  llama_cloud: "openai",
  lmstudio: "openai",
  mistral: "openai",
  nanogpt: "openai",
  nearai: "openai",
  nineteen_ai: "openai",
  nvidia: "openai",
  ollama: "openai",
  openrouter: "openai",
  redpill: "openai",
  secret_ai: "openai",
  together: "openai",
  venice: "openai",
  volengine: "openai",
} as const satisfies Record<string, ProviderName>;

export type ElizaModelProvider = keyof typeof ELIZA_MODEL_PROVIDERS;

export const ELIZA_MODEL_PROVIDER_NAMES = Object.keys(ELIZA_MODEL_PROVIDERS) as [
  ElizaModelProvider,
  ...ElizaModelProvider[],
];

/** The elizaOS names that an agent of this provider would be imported with. */
export function elizaNamesOf(provider: string): ElizaModelProvider[] {
  return ELIZA_MODEL_PROVIDER_NAMES.filter((name) => ELIZA_MODEL_PROVIDERS[name] === provider);
}
