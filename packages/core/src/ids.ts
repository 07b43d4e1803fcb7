import { monotonicFactory } from "ulidx";

const PREFIX = { agent: "agt", message: "msg", account: "acct", key: "key", request: "req" } as const;

export type IdKind = keyof typeof PREFIX;

const ulid = monotonicFactory();

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
