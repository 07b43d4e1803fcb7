import type { ToolContext } from "@agentry/plugin-kit";
import { describe, expect, it } from "vitest";
import { type CalculatorConfig, calculatorPlugin, evaluate } from "../src/index.js";

describe("evaluate", () => {
  const cases: [string, string][] = [
    ["0.1 + 0.2", "0.3"],
    ["1 - 0.9", "0.1"],
    ["2 * (3 + 4) % 5", "4"],
    ["10 / 4", "2.5"],
    ["2^10", "1024"],
    ["2**3**2", "512"],
    ["-2^2", "-4"],
    ["(-2)^2", "4"],
    ["- -3", "3"],
    ["2^100", "1267650600228229401496703205376"],
    ["1.1 * 1.1", "1.21"],
    ["sqrt(16) + abs(-3)", "7"],
    ["round(2.345, 2)", "2.35"],
    ["round(2.5)", "3"],
    ["floor(-1.5) + ceil(1.2) + trunc(-1.9)", "-1"],
    ["min(3, 1, 2) + max(3, 1, 2)", "4"],
    ["log(8, 2)", "3"],
    ["log10(1000)", "3"],
    ["1.5e3 + .5", "1500.5"],
    ["100000000000000000000 + 1", "100000000000000000001"],
  ];
  for (const [expression, result] of cases) {
    it(`${expression} = ${result}`, () => {
      expect(evaluate(expression, 34)).toBe(result);
    });
  }

  it("rounds what no decimal holds to the configured precision", () => {
    expect(evaluate("1/3", 10)).toBe("0.3333333333");
    expect(evaluate("sqrt(2)", 20)).toBe("1.4142135623730950488");
    expect(evaluate("pi", 12)).toBe("3.14159265359");
  });

  const refused: [string, RegExp][] = [
    ["", /empty/],
    ["1 / 0", /division by zero/],
    ["5 % 0", /division by zero/],
    ["sqrt(-1)", /negative/],
    ["(-8)^0.5", /fractional power/],
    ["ln(0)", /not positive/],
    ["1 +", /ends too early/],
    ["(1 + 2", /expected "\)"/],
    ["1 2", /unexpected "2" at position 3/],
    ["foo(1)", /unknown function foo/],
    ["x + 1", /unknown name x/],
    ["round(1, 2, 3)", /round takes 1 to 2 arguments, not 3/],
    ["process.exit(1)", /unexpected character "\."/],
    ["constructor.constructor('return 1')()", /unexpected character/],
    ["10^(10^20)", /too large/],
    [`${"(".repeat(100)}1${")".repeat(100)}`, /nests deeper/],
  ];
  for (const [expression, message] of refused) {
    it(`refuses ${JSON.stringify(expression.slice(0, 40))}`, () => {
      expect(() => evaluate(expression, 34)).toThrow(message);
    });
  }
});

describe("calculator plugin", () => {
  const tool = calculatorPlugin.tools[0]!;
  const context = (precision: number) =>
    ({ config: calculatorPlugin.config.parse({ precision }) }) as ToolContext<CalculatorConfig>;

  it("answers with the expression and its result, at the agent's precision", async () => {
    await expect(tool.call({ expression: "2/3" }, context(6))).resolves.toEqual({
      expression: "2/3",
      result: "0.666667",
    });
  });

  it("has a default config and refuses a precision out of bounds", () => {
    expect(calculatorPlugin.config.parse({})).toEqual({ precision: 34 });
    expect(calculatorPlugin.config.safeParse({ precision: 1000 }).success).toBe(false);
  });

  it("reports a bad expression as the tool's error", async () => {
    await expect(tool.call({ expression: "1/0" }, context(10))).rejects.toThrow(/division by zero/);
    await expect(tool.call({ expression: "" }, context(10))).rejects.toThrow(/invalid arguments/);
  });
});
