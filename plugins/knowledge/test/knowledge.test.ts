import type { KnowledgeHit, PluginHost, ToolContext } from "@agentry/plugin-kit";
import { describe, expect, it } from "vitest";
import { type KnowledgeConfig, knowledgePlugin } from "../src/index.js";

const search = knowledgePlugin.tools[0]!;

function contextWith(entries: string[], config: unknown = {}) {
  const calls: { query: string; limit: number; signal: AbortSignal }[] = [];
  const host: PluginHost = {
    now: () => new Date(),
    fetch: () => Promise.reject(new Error("no network in this test")),
    async searchKnowledge(query, limit, signal) {
      calls.push({ query, limit, signal });
      const words = query.toLowerCase().split(/\s+/);
      return entries
        .map((text, index): KnowledgeHit => ({ index, text }))
        .filter((hit) => words.some((word) => hit.text.toLowerCase().includes(word)))
        .slice(0, limit);
    },
    async searchDocuments(query, limit) {
      return query.toLowerCase().includes("lamp")
        ? [{ documentId: "doc_1", title: "Lighthouse", chunk: 2, text: "The lamp burns paraffin." }].slice(
            0,
            limit,
          )
        : [];
    },
  };
  const signal = new AbortController().signal;
  const context = {
    accountId: "acct_1",
    agentId: "agt_1",
    config: knowledgePlugin.config.parse(config),
    secrets: {},
    signal,
    deadline: Date.now() + 5000,
    host,
  } as ToolContext<KnowledgeConfig>;
  return { context, calls, signal };
}

describe("knowledge search", () => {
  it("asks the host to search the agent's knowledge with the call's signal, and answers its hits", async () => {
    const { context, calls, signal } = contextWith([
      "Opening hours: 9 to 5",
      "We ship to Canada",
      "Refunds take 5 days",
    ]);
    await expect(search.call({ query: "  refunds  " }, context)).resolves.toEqual({
      query: "refunds",
      hits: [{ index: 2, text: "Refunds take 5 days" }],
      documents: [],
    });
    expect(calls).toEqual([{ query: "refunds", limit: 5, signal }]);
  });

  it("answers the matching passages of the agent's documents too", async () => {
    const { context } = contextWith(["Opening hours: 9 to 5"]);
    await expect(search.call({ query: "lamp" }, context)).resolves.toEqual({
      query: "lamp",
      hits: [],
      documents: [{ documentId: "doc_1", title: "Lighthouse", chunk: 2, text: "The lamp burns paraffin." }],
    });
  });

  it("takes the model's limit, else the agent's default", async () => {
    const { context, calls } = contextWith(["a x", "b x", "c x"], { defaultLimit: 2 });
    expect(((await search.call({ query: "x" }, context)) as { hits: unknown[] }).hits).toHaveLength(2);
    await search.call({ query: "x", limit: 1 }, context);
    expect(calls.map((call) => call.limit)).toEqual([2, 1]);
  });

  it("refuses an empty query and a limit out of bounds", async () => {
    const { context } = contextWith([]);
    await expect(search.call({ query: "   " }, context)).rejects.toThrow(/invalid arguments/);
    await expect(search.call({ query: "x", limit: 500 }, context)).rejects.toThrow(/limit/);
    expect(knowledgePlugin.config.safeParse({ defaultLimit: 0 }).success).toBe(false);
  });
});
