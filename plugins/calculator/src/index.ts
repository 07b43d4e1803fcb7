import { definePlugin, defineTool } from "@agentry/plugin-kit";
import { z } from "zod";
import { evaluate } from "./expression.js";

export { ExpressionError, evaluate } from "./expression.js";

const config = z.object({
  /** Significant digits of results that must be rounded (1/3, sqrt(2)). */
  precision: z.number().int().min(4).max(100).default(34),
});

export type CalculatorConfig = z.output<typeof config>;

export const calculatorPlugin = definePlugin<CalculatorConfig>({
  name: "calculator",
  version: "1.0.0",
  description:
    "Exact decimal arithmetic on an expression: + - * / % ^, parentheses, and sqrt, abs, round, floor, ceil, " +
    "trunc, min, max, exp, ln, log, log10, sin, cos, tan, pi and e.",
  config,
  secrets: [],
  tools: [
    defineTool({
      name: "calculate",
      description:
        "Compute an arithmetic expression exactly in decimal (0.1 + 0.2 is 0.3), e.g. `(1200 * 1.075^3) / 12` or " +
        "`round(sqrt(2), 5)`. Operators: + - * / % ^ and parentheses; functions: sqrt, cbrt, abs, round(x, digits), " +
        "floor, ceil, trunc, min, max, pow, exp, ln, log(x, base), log10, sin, cos, tan (radians); constants pi, e. " +
        "The result is a decimal string.",
      input: z.object({ expression: z.string().min(1).max(1000).describe("The expression to compute") }),
      timeoutMs: 2_000,
      run: async ({ expression }, context) => ({
        expression,
        result: evaluate(expression, context.config.precision),
      }),
    }),
  ],
});
