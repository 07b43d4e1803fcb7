import type { BinCounts } from "../usage.js";

/**
 * A sketch read as bytes, without text: its zero count in binary (`int8send`, eight bytes, big-endian), then its
 * array in Postgres's binary form (`array_send`). Text (`array_to_string`) cost Postgres ten to sixty times the
 * scan of the rows, and the service as much again to scan it. (The driver's own binary results are not used: it
 * decodes every field as UTF-8, which changes the bytes of binary values.)
 */
export function binsAsBytes(column: string): string {
  const zeros = column.replace(/_bins$/, "_zeros");
  return `int8send(${zeros}) || array_send(${column})`;
}

/** The OID of `integer`, the type of a bins array's elements. */
const INT4_OID = 23;

/**
 * The counts of a sketch read by binsAsBytes. The array's binary form: its number of dimensions, whether it has
 * nulls, its element type, each dimension's length and lower bound, then each element as its length (-1 for a
 * null, which an element assigned past the upper bound leaves between) and its value.
 */
export function binCounts(bytes: Buffer): BinCounts {
  const zeros = bytes.readInt32BE(0) * 2 ** 32 + bytes.readUInt32BE(4);
  const dimensions = bytes.readInt32BE(8);
  if (dimensions === 0) return { zeros, first: 0, counts: [] };
  if (dimensions !== 1 || bytes.readInt32BE(16) !== INT4_OID) {
    throw new Error(`a bins array has ${dimensions} dimensions of type ${bytes.readInt32BE(16)}`);
  }
  const length = bytes.readInt32BE(20);
  const first = bytes.readInt32BE(24);
  const counts = new Int32Array(length);
  let at = 28;
  for (let i = 0; i < length; i++) {
    const size = bytes.readInt32BE(at);
    at += 4;
    if (size < 0) continue;
    counts[i] = bytes.readInt32BE(at);
    at += size;
  }
  return { zeros, first, counts };
}
