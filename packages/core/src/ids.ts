import { getRandomValues } from "node:crypto";
import { monotonicFactory } from "ulidx";

const PREFIX = { agent: "agt", message: "msg", account: "acct", key: "key", request: "req" } as const;

export type IdKind = keyof typeof PREFIX;

/**
 * The same cryptographic randomness ulidx uses by default, drawn 4 KiB at a time: its default asks the system
 * for each of an id's 16 random characters separately, which cost every request a measurable share of its time.
 */
const pool = new Uint32Array(1024);
let drawn = pool.length;
function random(): number {
  if (drawn === pool.length) {
    getRandomValues(pool);
    drawn = 0;
  }
  return pool[drawn++]! / 2 ** 32;
}

const ulid = monotonicFactory(random);

/** A new opaque, prefixed, time-sortable identifier, for example `agt_01J9Z...`. */
export function newId(kind: IdKind): string {
  return `${PREFIX[kind]}_${ulid()}`;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether value has the shape of an identifier of this kind. */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${PREFIX[kind]}_`;
  return value.startsWith(prefix) && ULID.test(value.slice(prefix.length));
}
