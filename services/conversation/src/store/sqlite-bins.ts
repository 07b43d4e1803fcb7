import { type BinCounts, ZERO_BIN } from "../usage.js";

/*
 * A sketch's bins as the SQLite store keeps them, a JSONB object of bin → count (usage.ts), read from the JSONB
 * blob itself (https://sqlite.org/jsonb.html) rather than through `json()`, whose text SQLite had to print and the
 * service to scan again.
 *
 * Each JSONB element is a header, then its payload: the header's first byte holds the element's type (low four
 * bits) and its payload's size (high four bits: the size itself up to 11, else 12, 13, 14 or 15 for a size in the
 * next 1, 2, 4 or 8 bytes, big-endian). An object's payload is its keys and values, one after the other; a
 * number's or a text's payload is its JSON text, without quotes.
 */

/** Element types: numbers are INT (RFC 8259 integer text), then INT5, FLOAT and FLOAT5 up to 6. */
const INT = 3;
const FLOAT5 = 6;
/** Texts, with or without escapes: TEXT to TEXTRAW. */
const TEXT = 7;
const TEXTRAW = 10;
const OBJECT = 12;
const ZERO_KEY = ZERO_BIN.charCodeAt(0);

/** How many bytes the header of the element at `at` takes: 1, or 1 and the 1, 2, 4 or 8 of its size. */
function headerBytes(blob: Uint8Array, at: number): number {
  const sizeCode = blob[at]! >> 4;
  return sizeCode <= 11 ? 1 : 1 + 2 ** (sizeCode - 12);
}

/** The size of the payload of the element at `at`. */
function payloadBytes(blob: Uint8Array, at: number): number {
  const sizeCode = blob[at]! >> 4;
  if (sizeCode <= 11) return sizeCode;
  const end = at + 1 + 2 ** (sizeCode - 12);
  let size = 0;
  for (let i = at + 1; i < end; i++) size = size * 256 + blob[i]!;
  return size;
}

/** An integer written in ASCII digits with an optional minus sign; NaN for anything else. */
function integer(blob: Uint8Array, start: number, end: number): number {
  const negative = blob[start] === 45; // -
  let value = 0;
  let i = negative ? start + 1 : start;
  if (i === end) return Number.NaN;
  for (; i < end; i++) {
    const digit = blob[i]! - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

function text(blob: Uint8Array, start: number, end: number): string {
  return Buffer.from(blob.buffer, blob.byteOffset + start, end - start).toString("latin1");
}

/** Bin keys and counts of one object, before they are laid out from the least key. */
const scratch = { keys: new Float64Array(512), counts: new Float64Array(512) };

/** The counts of a bins object in SQLite's JSONB; throws for a blob that is not an object of counts. */
export function jsonbBinCounts(blob: Uint8Array): BinCounts {
  const end = blob.length;
  if ((blob[0]! & 0x0f) !== OBJECT || headerBytes(blob, 0) + payloadBytes(blob, 0) !== end) {
    throw new Error("bins are not a JSONB object");
  }
  let { keys, counts } = scratch;
  let zeros = 0;
  let length = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let at = headerBytes(blob, 0); at < end; ) {
    const keyType = blob[at]! & 0x0f;
    if (keyType < TEXT || keyType > TEXTRAW) throw new Error("a key of a JSONB bins object is not text");
    const keyStart = at + headerBytes(blob, at);
    const keyEnd = keyStart + payloadBytes(blob, at);
    const type = blob[keyEnd]! & 0x0f;
    if (type < INT || type > FLOAT5) throw new Error("a count of a JSONB bins object is not a number");
    const valueStart = keyEnd + headerBytes(blob, keyEnd);
    at = valueStart + payloadBytes(blob, keyEnd);
    const count = type === INT ? integer(blob, valueStart, at) : Number(text(blob, valueStart, at));
    if (!(count > 0)) continue;
    if (keyEnd - keyStart === 1 && blob[keyStart] === ZERO_KEY) {
      zeros += count;
      continue;
    }
    const bin = integer(blob, keyStart, keyEnd);
    if (Number.isNaN(bin)) {
      throw new Error(`a JSONB bins object has the key '${text(blob, keyStart, keyEnd)}'`);
    }
    if (length === keys.length) {
      const grown = { keys: new Float64Array(length * 2), counts: new Float64Array(length * 2) };
      grown.keys.set(keys);
      grown.counts.set(counts);
      ({ keys, counts } = grown);
      scratch.keys = keys;
      scratch.counts = counts;
    }
    keys[length] = bin;
    counts[length] = count;
    length++;
    if (bin < min) min = bin;
    if (bin > max) max = bin;
  }
  if (length === 0) return { zeros, first: 0, counts: [] };
  const dense = new Float64Array(max - min + 1);
  for (let i = 0; i < length; i++) {
    const index = keys[i]! - min;
    dense[index] = dense[index]! + counts[i]!;
  }
  return { zeros, first: min, counts: dense };
}
