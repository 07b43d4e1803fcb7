import type { z } from "zod";

/*
 * Rules between two optional fields of a request body, checked and documented from one place: the check refuses
 * the body with 400 naming the field, and the same rule is stated in the body's JSON Schema, so the OpenAPI
 * document says what the server enforces.
 */

type Body = z.ZodObject;

/** `first` and `second` are never both given (`not: {required: [first, second]}`); neither is fine. */
export function atMostOneOf<S extends Body>(schema: S, first: string, second: string, message: string): S {
  return schema
    .superRefine((body: Record<string, unknown>, ctx) => {
      if (body[first] !== undefined && body[second] !== undefined)
        ctx.addIssue({ code: "custom", path: [second], message });
    })
    .meta({ not: { required: [first, second] } });
}

/** Exactly one of `first` and `second` is given (`oneOf` of the two `required`). */
export function exactlyOneOf<S extends Body>(schema: S, first: string, second: string, message: string): S {
  return schema
    .superRefine((body: Record<string, unknown>, ctx) => {
      if ((body[first] === undefined) === (body[second] === undefined))
        ctx.addIssue({ code: "custom", path: [first], message });
    })
    .meta({ oneOf: [{ required: [first] }, { required: [second] }] });
}
