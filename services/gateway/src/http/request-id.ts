import { newId } from "@agentry/core";

/** An incoming id is reused only when it is a plain token of sane length, so it is safe to log and echo. */
const REUSABLE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** The id of a request: the caller's `X-Request-Id` when it is safe to reuse, a new one otherwise. */
export function requestIdOf(incoming: string): string {
  return REUSABLE.test(incoming) ? incoming : newId("request");
}
