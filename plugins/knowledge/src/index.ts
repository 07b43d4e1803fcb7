import { definePlugin, defineTool } from "@agentry/plugin-kit";
import { z } from "zod";

const config = z.object({
  /** Hits a search returns when the model asks for no number. */
  defaultLimit: z.number().int().min(1).max(50).default(5),
});

export type KnowledgeConfig = z.output<typeof config>;

export const knowledgePlugin = definePlugin<KnowledgeConfig>({
  name: "knowledge",
  version: "1.0.0",
  description:
    "Full-text search over the agent's own knowledge entries, so a long knowledge list is consulted on demand " +
    "instead of read whole.",
  config,
  secrets: [],
  tools: [
    defineTool({
      name: "search",
      description:
        "Search the agent's knowledge entries for words or a phrase, as a person would type them; answers the " +
        "matching entries, best first, each with its position in the knowledge list.",
      input: z.object({
        query: z.string().trim().min(1).max(1000).describe("The words to look for"),
        limit: z.number().int().min(1).max(50).optional().describe("The most entries wanted"),
      }),
      timeoutMs: 5_000,
      run: async ({ query, limit }, context) => {
        const hits = await context.host.searchKnowledge(
          query,
          limit ?? context.config.defaultLimit,
          context.signal,
        );
        return { query, hits };
      },
    }),
  ],
});
