import { AppError, type FieldIssue } from "@agentry/errors";
import type { JsonObject } from "@bufbuild/protobuf";

/**
 * Agent `settings` that tune generation, and their bounds (part of the public contract, documented in the
 * OpenAPI document):
 * - `settings.temperature`: number from 0 to 2 inclusive; unset leaves the provider's default.
 * - `settings.maxTokens`: integer from 1 to 8192 inclusive, the most tokens a reply may have; default 1024.
 * `null` means unset. Other keys of `settings` are platform configuration and are ignored here.
 */
export const GENERATION_BOUNDS = {
  temperature: { min: 0, max: 2 },
  maxTokens: { min: 1, max: 8192, default: 1024 },
} as const;

export interface GenerationSettings {
  temperature?: number;
  maxTokens: number;
}

/** The field problems of an agent's generation settings; empty when they are within bounds. */
export function generationSettingsIssues(settings: JsonObject | undefined): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const temperature = settings?.temperature;
  if (temperature != null) {
    const { min, max } = GENERATION_BOUNDS.temperature;
    if (typeof temperature !== "number" || !(temperature >= min && temperature <= max)) {
      issues.push({ field: "settings.temperature", issue: `must be a number from ${min} to ${max}` });
    }
  }
  const maxTokens = settings?.maxTokens;
  if (maxTokens != null) {
    const { min, max } = GENERATION_BOUNDS.maxTokens;
    if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < min || maxTokens > max) {
      issues.push({ field: "settings.maxTokens", issue: `must be an integer from ${min} to ${max}` });
    }
  }
  return issues;
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
    maxTokens: typeof maxTokens === "number" ? maxTokens : GENERATION_BOUNDS.maxTokens.default,
  };
}
