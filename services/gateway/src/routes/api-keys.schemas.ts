import { API_KEY_PREFIX, SCOPES } from "@agentry/core";
import { z } from "zod";
import { id, nullableTimestamp } from "./common.schemas.js";

/* API key records (docs/api/auth-keys-and-scopes.md); the secret is shown only by a create. */

const apiKeyFields = {
  id: id("key", "The key's id"),
  name: z.string().meta({ description: "The key's label; empty when it has none." }),
  prefix: z.string().meta({
    description: "The first characters of the key, to recognise it.",
    examples: [`${API_KEY_PREFIX}a1B2c3`],
  }),
  scopes: z
    .array(z.enum(SCOPES))
    .meta({ description: "What the key may do: every scope it holds in this version." }),
  fullAccess: z.boolean().meta({
    description:
      "Whether the key was created without scopes: it holds every scope, including scopes added in later versions, which `scopes` then lists as well.",
  }),
  createdAt: nullableTimestamp("When the key was created."),
  lastUsedAt: nullableTimestamp("When the key was last used, to within a few seconds; `null`: never used."),
  expiresAt: nullableTimestamp("When the key stops working; `null`: never."),
  createdBy: z
    .string()
    .nullable()
    .meta({
      description:
        "The member who created the key (`usr_…`), directly or through a key they created; `null` for a key the admin CLI made.",
      examples: ["usr_01JCZ3S8Q5M2T7V9X0B4D6F8H1"],
    }),
};

export const ApiKey = z
  .object(apiKeyFields)
  .meta({ description: "An API key; the secret is never part of it." });

export const ApiKeyCreated = z.object({
  ...apiKeyFields,
  key: z.string().meta({
    description: `The secret: \`${API_KEY_PREFIX}\` and 38 letters and digits. Shown this once; store it safely.`,
  }),
});

export const ApiKeyRevoked = z.object({ id: id("key", "The revoked key's id"), revoked: z.literal(true) });
