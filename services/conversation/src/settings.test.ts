import { GENERATION_BOUNDS, generationSettingsIssues } from "@agentry/core";
import { describe, expect, it } from "vitest";
import { generationSettings, maxToolSteps, replyMaxTokens } from "./settings.js";

describe("generationSettings", () => {
  it("leaves unset maxTokens and temperature to the provider", () => {
    expect(generationSettings(undefined)).toEqual({});
    expect(generationSettings({ temperature: null, maxTokens: null, other: "x" })).toEqual({});
  });

  it("bounds a reply by the agent's maxTokens, else the provider's default, else the platform's", () => {
    expect(replyMaxTokens({ maxTokens: 700 }, { defaultMaxTokens: 200 })).toBe(700);
    expect(replyMaxTokens({}, { defaultMaxTokens: 200 })).toBe(200);
    expect(replyMaxTokens({}, {})).toBe(GENERATION_BOUNDS.maxTokens.default);
    expect(GENERATION_BOUNDS.maxTokens.default).toBe(1024);
  });

  it("takes values within bounds, the bounds included", () => {
    expect(generationSettings({ temperature: 0, maxTokens: 1 })).toEqual({ temperature: 0, maxTokens: 1 });
    expect(generationSettings({ temperature: 2, maxTokens: 8192 })).toEqual({
      temperature: 2,
      maxTokens: 8192,
    });
  });

  it("names every field out of bounds", () => {
    expect(generationSettingsIssues({ temperature: 3, maxTokens: "many" }).map((i) => i.field)).toEqual([
      "settings.temperature",
      "settings.maxTokens",
    ]);
    expect(() => generationSettings({ maxTokens: 0 })).toThrow(
      /settings\.maxTokens must be an integer from 1 to 8192/,
    );
  });

  it("checks maxToolSteps, 0 to 20, 5 when unset", () => {
    expect(maxToolSteps(undefined)).toBe(5);
    expect(maxToolSteps({ maxToolSteps: null })).toBe(5);
    expect(maxToolSteps({ maxToolSteps: 0 })).toBe(0);
    expect(generationSettings({ maxToolSteps: 20 })).toEqual({});
    for (const bad of [-1, 21, 2.5, "3"]) {
      expect(() => generationSettings({ maxToolSteps: bad })).toThrow(
        /settings\.maxToolSteps must be an integer from 0 to 20/,
      );
    }
  });
});
