import { z } from "zod";
import { timestamp } from "./common.schemas.js";

/* How each platform client of an agent stands (docs/api/connectors.md). */

export const ClientStatus = z
  .object({
    type: z.string().meta({ description: "The platform, as named in `clients`.", examples: ["telegram"] }),
    state: z
      .enum(["connected", "connecting", "stopped", "failed", "inert"])
      .meta({ description: "How the platform's connector stands." }),
    connectedAt: timestamp("When it last connected.").nullable(),
    lastEventAt: timestamp("When it last received a platform message.").nullable(),
    lastError: z
      .object({
        code: z.string().meta({ examples: ["CLIENT_AUTH_FAILED"] }),
        message: z.string(),
        at: timestamp("When it happened."),
      })
      .nullable()
      .meta({ description: "The last error the connector met, if any." }),
  })
  .meta({ description: "One platform client of an agent and how it stands." });
