import DEFAULT_PRICES from "./prices.json" with { type: "json" };

/** What a model's tokens cost, in US dollars per million tokens (docs/api/budgets.md, "Prices"). */
export interface ModelPrice {
  inputPerMillion: number;
  outputPerMillion: number;
}

/** A prices file: a price per model name, and the price of any model it does not name. */
export interface PriceTable {
  default: ModelPrice;
  models: Record<string, ModelPrice>;
}

/** A prices file that cannot be used; its message names the entry and what to write instead. */
export class InvalidPricesError extends Error {
  override readonly name = "InvalidPricesError";
}

/** The most a price may be, per million tokens: far above any real model's, low enough that sums stay exact. */
const MAX_PRICE = 100_000;

function price(value: unknown, where: string): ModelPrice {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidPricesError(`${where} must be an object {"inputPerMillion": n, "outputPerMillion": n}.`);
  }
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry)) {
    if (key !== "inputPerMillion" && key !== "outputPerMillion") {
      throw new InvalidPricesError(`${where} has an unknown field ${JSON.stringify(key)}.`);
    }
  }
  const figure = (field: "inputPerMillion" | "outputPerMillion") => {
    const n = entry[field];
    if (typeof n !== "number" || !Number.isFinite(n) || n < 0 || n > MAX_PRICE) {
      throw new InvalidPricesError(
        `${where}.${field} must be a number of US dollars per million tokens, 0 to ${MAX_PRICE}.`,
      );
    }
    return n;
  };
  return { inputPerMillion: figure("inputPerMillion"), outputPerMillion: figure("outputPerMillion") };
}

/**
 * Reads a prices file's JSON. `models` entries are added to (or replace) `base`'s, and `default`, when given,
 * replaces its default: an operator's file names only what it changes.
 * @throws InvalidPricesError naming the first entry that is wrong.
 */
export function parsePrices(json: unknown, base?: PriceTable, source = "the prices file"): PriceTable {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new InvalidPricesError(`${source} must hold a JSON object with "models" and optionally "default".`);
  }
  const file = json as Record<string, unknown>;
  for (const key of Object.keys(file)) {
    if (key !== "models" && key !== "default" && key !== "$comment") {
      throw new InvalidPricesError(`${source} has an unknown field ${JSON.stringify(key)}.`);
    }
  }
  const models: Record<string, ModelPrice> = { ...base?.models };
  if (file.models !== undefined) {
    if (typeof file.models !== "object" || file.models === null || Array.isArray(file.models)) {
      throw new InvalidPricesError(`${source}: "models" must be an object of model name to price.`);
    }
    for (const [name, value] of Object.entries(file.models)) {
      if (name.trim() === "") throw new InvalidPricesError(`${source}: a model name is empty.`);
      models[name] = price(value, `${source}: models[${JSON.stringify(name)}]`);
    }
  }
  const fallback = file.default !== undefined ? price(file.default, `${source}: default`) : base?.default;
  if (!fallback) throw new InvalidPricesError(`${source} must give a "default" price.`);
  return { default: fallback, models };
}

/** The prices this server ships with (prices.json beside this file). */
export const DEFAULT_PRICE_TABLE: PriceTable = parsePrices(DEFAULT_PRICES, undefined, "the default prices");

/** The price of a model: the entry whose name is the longest prefix of the model's, else the default. */
export function priceOf(table: PriceTable, model: string): ModelPrice {
  const exact = table.models[model];
  if (exact) return exact;
  let best: string | undefined;
  for (const name of Object.keys(table.models)) {
    if (model.startsWith(name) && (best === undefined || name.length > best.length)) best = name;
  }
  return best === undefined ? table.default : table.models[best]!;
}

/** Billionths of a US dollar: money is counted in whole units of these, so spend adds up exactly. */
export const NANO_USD_PER_USD = 1_000_000_000;

/**
 * What tokens of a model cost, in nano-dollars, rounded up to a whole one. Prices are taken to the millionth of a
 * dollar and the product is made in integers, so the same usage always costs the same.
 */
export function costNanoUsd(
  table: PriceTable,
  model: string,
  usage: { inputTokens: number; outputTokens: number },
): number {
  const { inputPerMillion, outputPerMillion } = priceOf(table, model);
  // A dollar per million tokens is a millionth of a dollar per token: a million pico-dollars.
  const pico =
    BigInt(Math.max(0, Math.trunc(usage.inputTokens))) * BigInt(Math.round(inputPerMillion * 1e6)) +
    BigInt(Math.max(0, Math.trunc(usage.outputTokens))) * BigInt(Math.round(outputPerMillion * 1e6));
  return Number((pico + 999n) / 1000n);
}

/** Nano-dollars as US dollars, for answers (`costUsd`). */
export function toUsd(nanoUsd: number): number {
  return nanoUsd / NANO_USD_PER_USD;
}
