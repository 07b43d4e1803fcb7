import { Decimal } from "decimal.js";

/** An expression that does not parse or cannot be computed; the message says where and why, for the model. */
export class ExpressionError extends Error {
  override readonly name = "ExpressionError";
}

type Token =
  | { kind: "number"; text: string; at: number }
  | { kind: "name"; text: string; at: number }
  | { kind: "op"; text: string; at: number };

const MAX_DEPTH = 64;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const rest = source.slice(i);
    const space = /^\s+/.exec(rest);
    if (space) {
      i += space[0].length;
      continue;
    }
    const number = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(rest);
    if (number) {
      tokens.push({ kind: "number", text: number[0], at: i });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (name) {
      tokens.push({ kind: "name", text: name[0], at: i });
      i += name[0].length;
      continue;
    }
    const op = rest[0]!;
    if (!"+-*/%^(),".includes(op)) {
      throw new ExpressionError(`unexpected character ${JSON.stringify(op)} at position ${i + 1}`);
    }
    // `**` is read as `^`, as many write it.
    if (rest.startsWith("**")) {
      tokens.push({ kind: "op", text: "^", at: i });
      i += 2;
      continue;
    }
    tokens.push({ kind: "op", text: op, at: i });
    i += 1;
  }
  return tokens;
}

type Fn = { arity: [number, number]; apply: (D: typeof Decimal, args: Decimal[]) => Decimal };

const FUNCTIONS: Record<string, Fn> = {
  abs: { arity: [1, 1], apply: (_, [x]) => x!.abs() },
  sqrt: {
    arity: [1, 1],
    apply: (_, [x]) => {
      if (x!.isNegative() && !x!.isZero()) throw new ExpressionError("sqrt of a negative number");
      return x!.sqrt();
    },
  },
  cbrt: { arity: [1, 1], apply: (_, [x]) => x!.cbrt() },
  exp: { arity: [1, 1], apply: (_, [x]) => x!.exp() },
  ln: { arity: [1, 1], apply: (_, [x]) => positive(x!, "ln").ln() },
  log10: { arity: [1, 1], apply: (_, [x]) => positive(x!, "log10").log(10) },
  log: {
    arity: [1, 2],
    apply: (_, [x, base]) =>
      base ? positive(x!, "log").log(positive(base, "log")) : positive(x!, "log").ln(),
  },
  floor: { arity: [1, 1], apply: (_, [x]) => x!.floor() },
  ceil: { arity: [1, 1], apply: (_, [x]) => x!.ceil() },
  trunc: { arity: [1, 1], apply: (_, [x]) => x!.trunc() },
  round: {
    arity: [1, 2],
    apply: (D, [x, digits]) => {
      const places = digits ? integer(digits, "round's digits", 0, 100) : 0;
      return x!.toDecimalPlaces(places, D.ROUND_HALF_UP);
    },
  },
  min: { arity: [1, 100], apply: (D, args) => D.min(...args) },
  max: { arity: [1, 100], apply: (D, args) => D.max(...args) },
  sin: { arity: [1, 1], apply: (_, [x]) => x!.sin() },
  cos: { arity: [1, 1], apply: (_, [x]) => x!.cos() },
  tan: { arity: [1, 1], apply: (_, [x]) => x!.tan() },
  pow: { arity: [2, 2], apply: (_, [x, y]) => power(x!, y!) },
};

const CONSTANTS: Record<string, (D: typeof Decimal) => Decimal> = {
  pi: (D) => D.acos(-1),
  e: (D) => D.exp(1),
};

function positive(x: Decimal, fn: string): Decimal {
  if (!x.isPositive() || x.isZero()) throw new ExpressionError(`${fn} of a number that is not positive`);
  return x;
}

function integer(x: Decimal, what: string, min: number, max: number): number {
  if (!x.isInteger() || x.lessThan(min) || x.greaterThan(max)) {
    throw new ExpressionError(`${what} must be a whole number from ${min} to ${max}`);
  }
  return x.toNumber();
}

function power(base: Decimal, exponent: Decimal): Decimal {
  if (base.isZero() && exponent.isNegative()) throw new ExpressionError("division by zero");
  if (base.isNegative() && !exponent.isInteger()) {
    throw new ExpressionError("a negative number to a fractional power");
  }
  return base.pow(exponent);
}

/** A recursive-descent parser that computes as it reads: `+ - * / % ^` (right-associative), unary signs, calls. */
class Parser {
  private position = 0;
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly D: typeof Decimal,
    private readonly length: number,
  ) {}

  parse(): Decimal {
    if (this.tokens.length === 0) throw new ExpressionError("the expression is empty");
    const value = this.additive();
    const next = this.peek();
    if (next) throw new ExpressionError(`unexpected ${JSON.stringify(next.text)} at position ${next.at + 1}`);
    return value;
  }

  private peek(): Token | undefined {
    return this.tokens[this.position];
  }

  private take(text: string): boolean {
    const next = this.peek();
    if (next?.kind === "op" && next.text === text) {
      this.position++;
      return true;
    }
    return false;
  }

  private expect(text: string): void {
    if (this.take(text)) return;
    const next = this.peek();
    throw new ExpressionError(
      next
        ? `expected ${JSON.stringify(text)} at position ${next.at + 1}, found ${JSON.stringify(next.text)}`
        : `expected ${JSON.stringify(text)} at the end (position ${this.length + 1})`,
    );
  }

  private additive(): Decimal {
    let value = this.multiplicative();
    for (;;) {
      if (this.take("+")) value = value.plus(this.multiplicative());
      else if (this.take("-")) value = value.minus(this.multiplicative());
      else return value;
    }
  }

  private multiplicative(): Decimal {
    let value = this.unary();
    for (;;) {
      if (this.take("*")) value = value.times(this.unary());
      else if (this.take("/")) value = value.dividedBy(nonZero(this.unary()));
      else if (this.take("%")) value = value.modulo(nonZero(this.unary()));
      else return value;
    }
  }

  // A sign binds looser than `^`: -2^2 is -(2^2), as in mathematics.
  private unary(): Decimal {
    return this.nested(() => {
      if (this.take("-")) return this.unary().negated();
      if (this.take("+")) return this.unary();
      return this.power();
    });
  }

  private power(): Decimal {
    const base = this.primary();
    if (this.take("^")) return power(base, this.unary());
    return base;
  }

  private primary(): Decimal {
    const token = this.peek();
    if (!token) throw new ExpressionError(`the expression ends too early (position ${this.length + 1})`);
    this.position++;
    if (token.kind === "number") return new this.D(token.text);
    if (token.kind === "op") {
      if (token.text !== "(") {
        throw new ExpressionError(`unexpected ${JSON.stringify(token.text)} at position ${token.at + 1}`);
      }
      const value = this.nested(() => this.additive());
      this.expect(")");
      return value;
    }
    const name = token.text.toLowerCase();
    if (this.take("(")) {
      const fn = FUNCTIONS[name];
      if (!fn)
        throw new ExpressionError(
          `unknown function ${token.text} (known: ${Object.keys(FUNCTIONS).join(", ")})`,
        );
      const args: Decimal[] = [];
      if (!this.take(")")) {
        do args.push(this.nested(() => this.additive()));
        while (this.take(","));
        this.expect(")");
      }
      const [least, most] = fn.arity;
      if (args.length < least || args.length > most) {
        throw new ExpressionError(
          `${name} takes ${least === most ? least : `${least} to ${most}`} argument${most === 1 ? "" : "s"}, not ${args.length}`,
        );
      }
      return fn.apply(this.D, args);
    }
    const constant = CONSTANTS[name];
    if (!constant) throw new ExpressionError(`unknown name ${token.text} (known constants: pi, e)`);
    return constant(this.D);
  }

  private nested<T>(read: () => T): T {
    if (++this.depth > MAX_DEPTH) throw new ExpressionError(`the expression nests deeper than ${MAX_DEPTH}`);
    try {
      return read();
    } finally {
      this.depth--;
    }
  }
}

function nonZero(x: Decimal): Decimal {
  if (x.isZero()) throw new ExpressionError("division by zero");
  return x;
}

/**
 * Computes an arithmetic expression in decimal, to `precision` significant digits: 0.1 + 0.2 is exactly 0.3, and
 * only results that no decimal can hold (1/3, sqrt(2)) are rounded. The expression is parsed here, never run as code.
 */
export function evaluate(expression: string, precision: number): string {
  const D = Decimal.clone({ precision, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -12, toExpPos: 40 });
  const value = new Parser(tokenize(expression), D, expression.length).parse();
  if (!value.isFinite()) throw new ExpressionError("the result is too large");
  return value.toSignificantDigits(precision).toString();
}
