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
    "Full-text search over the agent's own knowledge entries and the chunks of its uploaded documents, so a " +
    "long knowledge list or a large document is consulted on demand instead of read whole.",
  config,
  secrets: [],
  tools: [
    defineTool({
      name: "search",
      description:
        "Search the agent's knowledge entries and documents for words or a phrase, as a person would type them; " +
        "answers the matching entries, best first, each with its position in the knowledge list, and the matching " +
        "passages of documents, best first, each with its document's id and title and its chunk number.",
      input: z.object({
        query: z.string().trim().min(1).max(1000).describe("The words to look for"),
        limit: z.number().int().min(1).max(50).optional().describe("The most entries wanted"),
      }),
      timeoutMs: 5_000,
      run: async ({ query, limit }, context) => {
        const wanted = limit ?? context.config.defaultLimit;
        const [hits, documents] = await Promise.all([
          context.host.searchKnowledge(query, wanted, context.signal),
          context.host.searchDocuments(query, wanted, context.signal),
        ]);
        return { query, hits, documents };
      },
    }),
  ],
});
