import { mapAsyncIterable } from "@agentry/core";
import { AppError } from "@agentry/errors";
import { failSpan, type Metrics, SpanKind, tracer } from "@agentry/observability";
import type { ProviderSet } from "./resolve.js";
import type { ModelProvider, ProviderEvent, ProviderResult } from "./types.js";

/** The code a failed call is counted under: the public one, or CANCELLED when the caller's signal ended it. */
function failureCode(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "CANCELLED";
  return error instanceof AppError ? error.code : "INTERNAL_ERROR";
}

/**
 * Wraps a provider so that each call is measured (duration, time to the first text, tokens, errors by code)
 * and, when tracing is on, is a client span with the model and the token counts. Returns the provider itself
 * when there is nothing to record.
 */
export function observeProvider(provider: ModelProvider, metrics: Metrics | undefined): ModelProvider {
  if (!metrics && !tracer()) return provider;
  const name = provider.name;

  const begin = (operation: string, model: string) => {
    const started = performance.now();
    const span = tracer()?.startSpan(`${name} ${operation}`, {
      kind: SpanKind.CLIENT,
      attributes: { "gen_ai.system": name, "gen_ai.operation.name": "chat", "gen_ai.request.model": model },
    });
    const seconds = () => (performance.now() - started) / 1000;
    return {
      firstToken() {
        metrics?.observeFirstToken(name, seconds());
      },
      succeeded(result: Omit<ProviderResult, "text">) {
        metrics?.observeProviderCall(name, "ok", seconds());
        metrics?.countTokens(name, result.usage.inputTokens, result.usage.outputTokens);
        span?.setAttributes({
          "gen_ai.response.model": result.model,
          "gen_ai.usage.input_tokens": result.usage.inputTokens,
          "gen_ai.usage.output_tokens": result.usage.outputTokens,
          "gen_ai.response.finish_reasons": [result.finishReason],
        });
        span?.end();
      },
      failed(error: unknown, signal: AbortSignal) {
        const code = failureCode(error, signal);
        metrics?.observeProviderCall(name, "error", seconds());
        metrics?.countProviderError(name, code);
        if (span) {
          failSpan(span, error);
          span.setAttribute("error.type", code);
          span.end();
        }
      },
    };
  };

  return {
    name,
    get defaultModel() {
      return provider.defaultModel;
    },
    async complete(request, signal) {
      const call = begin("complete", request.model);
      try {
        const result = await provider.complete(request, signal);
        call.succeeded(result);
        return result;
      } catch (error) {
        call.failed(error, signal);
        throw error;
      }
    },
    async stream(request, signal) {
      const call = begin("stream", request.model);
      let events: AsyncIterable<ProviderEvent>;
      try {
        events = await provider.stream(request, signal);
      } catch (error) {
        call.failed(error, signal);
        throw error;
      }
      let first = true;
      let ended = false;
      return mapAsyncIterable(events, {
        map(event) {
          if (event.type === "done") {
            ended = true;
            call.succeeded(event);
          } else if (first) {
            first = false;
            call.firstToken();
          }
          return event;
        },
        onEnd() {
          if (!ended) call.failed(new AppError("AGENT_UNAVAILABLE", "The reply stream ended early."), signal);
        },
        onError(error) {
          if (!ended) call.failed(error, signal);
          return error;
        },
        // The reader left before the end: the call was abandoned.
        onLeave() {
          if (!ended) call.failed(new AppError("AGENT_UNAVAILABLE", "The caller went away."), signal);
        },
      });
    },
  };
}

/** Makes every provider the set resolves an observed one (each wrapped once, on first use). */
export function observeProviders(providers: ProviderSet, metrics: Metrics | undefined): void {
  if (!metrics && !tracer()) return;
  const resolve = providers.resolve.bind(providers);
  const observed = new Map<ModelProvider, ModelProvider>();
  providers.resolve = (agentProvider, agentModel) => {
    const resolved = resolve(agentProvider, agentModel);
    let wrapped = observed.get(resolved.provider);
    if (wrapped === undefined) {
      wrapped = observeProvider(resolved.provider, metrics);
      observed.set(resolved.provider, wrapped);
    }
    return { ...resolved, provider: wrapped };
  };
}
