import { isProviderName, unconfiguredProviderIssue } from "@agentry/core";
import type { FieldIssue } from "@agentry/errors";
import type { ServedProviders } from "../providers.js";

/** An agent's provider and model as a write leaves them; `null` is the default (the server's, the provider's). */
export interface ModelChoice {
  modelProvider: string | null;
  model: string | null;
}

/** Which half of the choice the request itself sets; the other is the stored agent's. */
export interface ModelChoiceSent {
  modelProvider: boolean;
  model: boolean;
}

/** The served provider of that name, if any. */
export function servedProvider(served: ServedProviders, name: string) {
  return served.providers.find((provider) => provider.name === name);
}

/**
 * Why an agent could never be answered in this deployment, found when it is written rather than as a 502 when
 * it is messaged: a model its provider (named, or the default one) does not serve, for a provider that serves
 * only some models (`local`, which runs one model file). Hosted providers take any model name and refuse an
 * unknown one themselves. A default (`null`) is always served. A provider this server has a client for but no
 * configuration is not refused: the write carries a warning instead (`modelChoiceWarnings`).
 */
export function modelChoiceIssues(
  served: ServedProviders,
  choice: ModelChoice,
  sent: ModelChoiceSent,
): FieldIssue[] {
  const name = choice.modelProvider ?? served.defaultProvider;
  const provider = servedProvider(served, name);
  const model = choice.model;
  if (!provider || provider.models.length === 0 || model === null || provider.models.includes(model))
    return [];
  const whose =
    choice.modelProvider === null
      ? `the default provider, ${name},`
      : sent.modelProvider
        ? name
        : `${name}, the agent's provider,`;
  const models = provider.models.join(", ");
  return [
    {
      field: "model",
      issue: sent.model
        ? `must be one of the models ${whose} serves: ${models}`
        : `is "${model}", which ${whose} does not serve (it serves ${models}); send a model with modelProvider, or null for ${provider.defaultModel}`,
    },
  ];
}

/**
 * Whether checking a PATCH needs the stored agent: when the half it does not send could make the other fail.
 * A `null` it sends is a default, always served.
 */
export function needsStoredChoice(
  served: ServedProviders,
  choice: ModelChoice,
  sent: ModelChoiceSent,
): boolean {
  if (!sent.modelProvider && !sent.model) return false;
  if (!sent.modelProvider) {
    return choice.model !== null && served.providers.some((provider) => provider.models.length > 0);
  }
  if (!sent.model) {
    const provider = servedProvider(served, choice.modelProvider ?? served.defaultProvider);
    return provider !== undefined && provider.models.length > 0;
  }
  return false;
}

/**
 * The warnings of a write that names a provider this server has a client for but no configuration
 * (docs/api/providers.md, "Choosing a provider and model"): the agent is kept, and the warning names what to set.
 */
export function modelChoiceWarnings(served: ServedProviders, modelProvider: string | null): FieldIssue[] {
  if (modelProvider === null || !isProviderName(modelProvider) || servedProvider(served, modelProvider))
    return [];
  return [{ field: "modelProvider", issue: unconfiguredProviderIssue(modelProvider) }];
}
