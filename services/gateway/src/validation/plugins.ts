import { z } from "zod";

/*
 * Bodies and parameters of the plugin routes (docs/api/plugins-and-tools.md, "Agent secrets"). The registry checks the same
 * bounds again; no message here ever repeats a secret's value.
 */

export const SECRET_BOUNDS = { nameMaxLength: 64, valueMaxLength: 4096 } as const;
export const SECRET_NAME_PATTERN = "^[A-Za-z0-9_-]{1,64}$";

export const secretName = z
  .string()
  .regex(new RegExp(SECRET_NAME_PATTERN), "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -");

export const putSecretBody = z.strictObject(
  {
    value: z
      .string({ error: "must be a string" })
      .min(1, `must be 1 to ${SECRET_BOUNDS.valueMaxLength} characters`)
      .max(SECRET_BOUNDS.valueMaxLength, `must be 1 to ${SECRET_BOUNDS.valueMaxLength} characters`)
      .meta({
        description: `The secret's value, 1 to ${SECRET_BOUNDS.valueMaxLength} characters. Stored encrypted; never returned, logged or exported.`,
        examples: ["sk-live-…"],
      }),
  },
  { error: "must be a JSON object" },
);
