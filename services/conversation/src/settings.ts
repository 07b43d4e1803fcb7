import { GENERATION_BOUNDS, generationSettingsIssues, type ToolChoice } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { JsonObject } from "@bufbuild/protobuf";

export interface GenerationSettings {
  temperature?: number;
  /** Unset: the provider's default (`replyMaxTokens`). */
  maxTokens?: number;
}

/** A reply's token bound: the agent's own, else the provider's default, else the platform's. */
export function replyMaxTokens(
  settings: GenerationSettings,
  provider: { defaultMaxTokens?: number },
): number {
  return settings.maxTokens ?? provider.defaultMaxTokens ?? GENERATION_BOUNDS.maxTokens.default;
}

/** The rounds of tool calls a turn may make (`settings.maxToolSteps`), once `generationSettings` has checked them. */
export function maxToolSteps(settings: JsonObject | undefined): number {
  const steps = settings?.maxToolSteps;
  return typeof steps === "number" ? steps : GENERATION_BOUNDS.maxToolSteps.default;
}

/** Whether the turn's first round must call a tool (`settings.toolChoice`), once `generationSettings` has checked it. */
export function toolChoice(settings: JsonObject | undefined): ToolChoice {
  return settings?.toolChoice === "required" ? "required" : "auto";
}

/** The generation settings of an agent; INVALID_REQUEST naming each field out of bounds. */
export function generationSettings(settings: JsonObject | undefined): GenerationSettings {
  const issues = generationSettingsIssues(settings);
  if (issues.length > 0) {
    throw new AppError(
      "INVALID_REQUEST",
      `The agent's settings are out of bounds: ${issues.map((i) => `${i.field} ${i.issue}`).join("; ")}.`,
      { details: issues },
    );
  }
  const temperature = settings?.temperature;
  const maxTokens = settings?.maxTokens;
  return {
    ...(typeof temperature === "number" ? { temperature } : {}),
    ...(typeof maxTokens === "number" ? { maxTokens } : {}),
  };
}
