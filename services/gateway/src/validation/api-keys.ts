import { SCOPES } from "@agentry/core";
import { z } from "zod";
import { trimmedText } from "./text.js";

export const createApiKeyBody = z.strictObject(
  {
    name: trimmedText(0, 200)
      .optional()
      .meta({
        description: "A label for the key: at most 200 characters once trimmed, stored trimmed.",
        examples: ["ci"],
      }),
    scopes: z
      .array(z.enum(SCOPES, { error: `must be one of: ${SCOPES.join(", ")}` }), { error: "must be an array" })
      .min(1, "must name at least one scope; omit it to grant every scope this key holds")
      .refine((scopes) => new Set(scopes).size === scopes.length, "must not repeat a scope")
      .optional()
      .meta({
        description:
          "The scopes to grant, each at most once; the calling key must hold them. Unset: what the calling key holds. A full-access key makes a full-access key (every scope, including scopes added in later versions); any other key makes one with exactly its own scopes.",
        uniqueItems: true,
        examples: [["agents:read"]],
      }),
    expiresAt: z.iso
      .datetime({
        offset: true,
        error: "must be an ISO 8601 date-time with a time zone, e.g. 2027-01-01T00:00:00Z",
      })
      .refine((value) => Date.parse(value) > Date.now(), "must be in the future")
      .optional()
      .meta({
        description:
          "When the key stops working: a date-time with a time zone, which must be in the future (an earlier one is refused with `400 INVALID_REQUEST`). Unset: never.",
        examples: ["2027-01-01T00:00:00Z"],
      }),
  },
  { error: "must be a JSON object" },
);
