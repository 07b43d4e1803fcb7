import { z } from "zod";

export const importCharacterQuery = z.strictObject({
  dryRun: z
    .enum(["true", "false"], { error: "must be 'true' or 'false', given once" })
    .default("false")
    .transform((value) => value === "true")
    .meta({
      description:
        "`true`: check the file and answer `200` with the agent it would create and the warnings; nothing is stored and the quota is not checked.",
    }),
  useDefaultModel: z
    .enum(["true", "false"], { error: "must be 'true' or 'false', given once" })
    .default("false")
    .transform((value) => value === "true")
    .meta({
      description:
        "`true`: the agent uses this server's default provider and model (`modelProvider` and `model` `null`); the file's are kept in `personality.sourceModelProvider` and `personality.sourceModel`, and the export puts them back.",
    }),
});
