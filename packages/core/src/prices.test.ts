import { describe, expect, it } from "vitest";
import { costNanoUsd, DEFAULT_PRICE_TABLE, InvalidPricesError, parsePrices, priceOf } from "./prices.js";

describe("prices", () => {
  it("prices the common models and nothing else by default", () => {
    expect(priceOf(DEFAULT_PRICE_TABLE, "gpt-4o")).toEqual({ inputPerMillion: 2.5, outputPerMillion: 10 });
    // A dated version takes its family's price; a longer family name wins over its prefix.
    expect(priceOf(DEFAULT_PRICE_TABLE, "gpt-4o-2024-08-06").inputPerMillion).toBe(2.5);
    expect(priceOf(DEFAULT_PRICE_TABLE, "gpt-4o-mini-2024-07-18").inputPerMillion).toBe(0.15);
    expect(priceOf(DEFAULT_PRICE_TABLE, "claude-sonnet-4-20250514").outputPerMillion).toBe(15);
    expect(priceOf(DEFAULT_PRICE_TABLE, "qwen2.5-0.5b-instruct")).toEqual({
      inputPerMillion: 0,
      outputPerMillion: 0,
    });
  });

  it("costs usage exactly, in nano-dollars rounded up", () => {
    // 1,000 input tokens at $0.15/M and 100 output tokens at $0.60/M: $0.00015 + $0.00006.
    expect(costNanoUsd(DEFAULT_PRICE_TABLE, "gpt-4o-mini", { inputTokens: 1000, outputTokens: 100 })).toBe(
      210_000,
    );
    const third = parsePrices({ default: { inputPerMillion: 0.000333, outputPerMillion: 0 } });
    // 0.333 nano-dollars rounds up to 1.
    expect(costNanoUsd(third, "any", { inputTokens: 1, outputTokens: 0 })).toBe(1);
  });

  it("lays an operator's file over the defaults", () => {
    const table = parsePrices(
      {
        models: {
          "gpt-4o": { inputPerMillion: 1, outputPerMillion: 2 },
          "my-model": { inputPerMillion: 3, outputPerMillion: 4 },
        },
      },
      DEFAULT_PRICE_TABLE,
    );
    expect(priceOf(table, "gpt-4o")).toEqual({ inputPerMillion: 1, outputPerMillion: 2 });
    expect(priceOf(table, "my-model").outputPerMillion).toBe(4);
    expect(priceOf(table, "claude-3-haiku").inputPerMillion).toBe(0.25);
    expect(table.default).toEqual(DEFAULT_PRICE_TABLE.default);
  });

  it.each([
    [[], "must hold a JSON object"],
    [{ model: {} }, 'unknown field "model"'],
    [
      { models: { x: { inputPerMillion: -1, outputPerMillion: 0 } } },
      'models["x"].inputPerMillion must be a number',
    ],
    [{ models: { x: { inputPerMillion: 1 } } }, 'models["x"].outputPerMillion must be a number'],
    [{ models: { x: { input: 1, outputPerMillion: 1 } } }, 'models["x"] has an unknown field "input"'],
    [{ models: { x: "1" } }, 'models["x"] must be an object'],
    [{ models: {} }, 'must give a "default" price'],
  ])("refuses %j with a message naming the entry", (json, message) => {
    expect(() => parsePrices(json, undefined, "prices.json")).toThrow(InvalidPricesError);
    expect(() => parsePrices(json, undefined, "prices.json")).toThrow(message);
  });
});
