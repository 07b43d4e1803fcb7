import { getRandomValues } from "node:crypto";
import { ulid as datedUlid, decodeTime, monotonicFactory } from "ulidx";

const PREFIX = {
  agent: "agt",
  message: "msg",
  conversation: "conv",
  account: "acct",
  key: "key",
  request: "req",
  event: "evt",
  webhook: "whk",
  delivery: "dlv",
  session: "ses",
  memory: "mem",
  document: "doc",
  schedule: "sch",
  member: "usr",
  budget: "bdg",
  audit: "aud",
} as const;

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
// Dated ids do not come from the monotonic factory, which would keep the latest time it gave, not the one asked.

/**
 * A new opaque, prefixed, time-sortable identifier, for example `agt_01J9Z...`. `at` (epoch milliseconds) dates
 * an identifier given to something that already existed, such as a conversation stored before conversations
 * had ids.
 */
export function newId(kind: IdKind, at?: number): string {
  return `${PREFIX[kind]}_${at === undefined ? ulid() : datedUlid(at, random)}`;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether value has the shape of an identifier of this kind. */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${PREFIX[kind]}_`;
  return value.startsWith(prefix) && ULID.test(value.slice(prefix.length));
}

/** When an identifier was made (epoch milliseconds), from the time its ULID carries. */
export function timeOfId(id: string): number {
  return decodeTime(id.slice(id.indexOf("_") + 1));
}
