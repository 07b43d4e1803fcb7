import { readFileSync } from "node:fs";
import { DEFAULT_PRICE_TABLE, type PriceTable, parsePrices } from "@agentry/core";

/** The shipped prices, with the operator's file over them when one is named. */
export function loadPrices(file: string | undefined): PriceTable {
  if (file === undefined) return DEFAULT_PRICE_TABLE;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`cannot read the prices file ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`the prices file ${file} is not JSON: ${(error as Error).message}`);
  }
  return parsePrices(json, DEFAULT_PRICE_TABLE, `the prices file ${file}`);
}
