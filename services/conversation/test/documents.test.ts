import { readFileSync } from "node:fs";
import { isId } from "@agentry/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CHUNK_CHARACTERS, CHUNK_OVERLAP, chunkText, citationsOf } from "../src/documents.js";
import type { OpenAIChatBody } from "../src/testing/index.js";
import { ACCOUNT, agent, failure, type Harness, startHarness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.openai.reset());

const HEADING = "Passages from your knowledge documents";
const encode = (text: string) => new TextEncoder().encode(text);
const PDF = new Uint8Array(readFileSync(new URL("./fixtures/lighthouse.pdf", import.meta.url)));

function systemOf(body: OpenAIChatBody): string {
  return String(body.messages?.find((m) => m.role === "system")?.content ?? "");
}

async function upload(agentId: string, contentType: string, content: Uint8Array, title = "", source = "") {
  const { document } = await h.client.createDocument({
    accountId: ACCOUNT,
    agentId,
    contentType,
    content,
    title,
    source,
  });
  return document!;
}

describe("documents of each type", () => {
  const files: [string, Uint8Array, string, string][] = [
    [
      "text/plain",
      encode("Opening hours\nThe reading room opens at nine."),
      "reading room opens",
      "Opening hours",
    ],
    [
      "text/markdown; charset=utf-8",
      encode("# Ferries\n\nThe **ferry** to Mull leaves at 07:30."),
      "ferry** to Mull",
      "# Ferries",
    ],
    [
      "text/html",
      encode(
        "<html><head><title>x</title><style>p{}</style></head><body><h1>Bakery</h1><p>The sourdough <b>loaf</b> is baked at dawn.</p><script>var a=1</script></body></html>",
      ),
      "sourdough loaf is baked at dawn",
      "BAKERY",
    ],
    [
      "application/pdf",
      PDF,
      "lamp burns paraffin",
      "The lighthouse keeper of Skerryvore logs the tide twice a day.",
    ],
  ];

  it.each(files)(
    "reads %s, puts the matching passage in the prompt and cites it in the reply and the stored message",
    async (type, content, passage, title) => {
      const a = agent();
      const document = await upload(a.id, type, content);
      expect(isId("document", document.id)).toBe(true);
      expect(document).toMatchObject({
        agentId: a.id,
        title,
        chunks: 1,
        sizeBytes: BigInt(content.byteLength),
      });
      expect(document.contentType).toBe(type.split(";")[0]);

      const question = {
        "text/plain": "When does the reading room open?",
        "text/markdown; charset=utf-8": "When does the ferry to Mull leave?",
        "text/html": "When is the sourdough baked?",
        "application/pdf": "What does the Skerryvore lamp burn?",
      }[type]!;
      const { reply } = await h.client.sendMessage({
        accountId: ACCOUNT,
        agent: a,
        text: question,
        userId: "u",
      });
      const system = systemOf(h.openai.lastRequest.body);
      expect(system).toContain(HEADING);
      expect(system).toContain(`[1] ${JSON.stringify(title)} (${document.id}, chunk 0)`);
      expect(system).toContain(passage);
      // HTML is read without its markup, scripts and styles.
      expect(system).not.toMatch(/<b>|var a=1|p\{\}/);
      expect(reply!.citations).toHaveLength(1);
      expect(reply!.citations[0]).toMatchObject({ documentId: document.id, chunk: 0 });
      expect(reply!.citations[0]!.score).toBe(1);

      const { message } = await h.client.getMessage({
        accountId: ACCOUNT,
        agentId: a.id,
        messageId: reply!.id,
      });
      expect(message!.citations.map((c) => [c.documentId, c.chunk])).toEqual([[document.id, 0]]);
    },
  );
});

describe("retrieval", () => {
  it("carries only the agent's own documents, none once deleted, and none within a budget of 0", async () => {
    const a = agent();
    const other = agent();
    const mine = await upload(a.id, "text/plain", encode("The Skerryvore lamp burns paraffin."), "Lamp");
    await upload(other.id, "text/plain", encode("The Skerryvore lamp burns whale oil."), "Other lamp");
    const text = "What does the Skerryvore lamp burn?";

    const { reply } = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text });
    expect(systemOf(h.openai.lastRequest.body)).not.toContain("whale oil");
    expect(reply!.citations.map((c) => c.documentId)).toEqual([mine.id]);

    const silent = agent({ settings: { knowledgeTokenBudget: 0 } }, a.id);
    const { reply: none } = await h.client.sendMessage({ accountId: ACCOUNT, agent: silent, text });
    expect(systemOf(h.openai.lastRequest.body)).not.toContain(HEADING);
    expect(none!.citations).toEqual([]);

    await h.client.deleteDocument({ accountId: ACCOUNT, agentId: a.id, documentId: mine.id });
    const { reply: after } = await h.client.sendMessage({ accountId: ACCOUNT, agent: a, text });
    expect(systemOf(h.openai.lastRequest.body)).not.toContain(HEADING);
    expect(after!.citations).toEqual([]);
    expect(
      (await failure(h.client.getDocument({ accountId: ACCOUNT, agentId: a.id, documentId: mine.id }))).code,
    ).toBe("DOCUMENT_NOT_FOUND");
    expect(
      (await failure(h.client.deleteDocument({ accountId: ACCOUNT, agentId: a.id, documentId: mine.id })))
        .code,
    ).toBe("DOCUMENT_NOT_FOUND");
  });

  it("keeps the passages within the agent's token budget, best first", async () => {
    const a = agent({ settings: { knowledgeTokenBudget: 400 } });
    const long = Array.from({ length: 12 }, (_, i) =>
      `Section ${i}: the tide tables of the harbour.`.padEnd(300, " x"),
    ).join("\n\n");
    const document = await upload(a.id, "text/plain", encode(long), "Tides");
    expect(document.chunks).toBeGreaterThan(2);
    const { reply } = await h.client.sendMessage({
      accountId: ACCOUNT,
      agent: a,
      text: "harbour tide tables",
    });
    // Each chunk of about 1,200 characters costs about 300 tokens: one fits 400, two do not.
    expect(reply!.citations).toHaveLength(1);
  });
});

describe("uploads refused", () => {
  it("answers an unsupported type naming those supported, a file over 10 MiB, and one without text", async () => {
    const a = agent();
    const badType = await failure(upload(a.id, "image/png", new Uint8Array([137, 80, 78, 71])));
    expect(badType.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(badType.message).toContain("text/plain, text/markdown, text/html, application/pdf");
    const tooLarge = await failure(upload(a.id, "text/plain", new Uint8Array(10 * 1024 * 1024 + 1).fill(97)));
    expect(tooLarge.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await failure(upload(a.id, "text/plain", encode("  \n ")))).code).toBe("INVALID_REQUEST");
    const notPdf = await failure(upload(a.id, "application/pdf", encode("not a pdf")));
    expect(notPdf.code).toBe("INVALID_REQUEST");
    const { documents } = await h.client.listDocuments({ accountId: ACCOUNT, agentId: a.id });
    expect(documents).toEqual([]);
  });
});

describe("chunking", () => {
  it("cuts text into chunks of at most the chunk size that overlap and keep words whole", () => {
    const words = Array.from({ length: 800 }, (_, i) => `word${i}`).join(" ");
    const chunks = chunkText(words);
    expect(chunks.length).toBeGreaterThan(4);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(CHUNK_CHARACTERS);
      expect(chunk).toMatch(/^word\d+( word\d+)*$/);
    }
    // Words are unique: each chunk starts with a word of the one before, within its last CHUNK_OVERLAP characters.
    for (let i = 1; i < chunks.length; i++) {
      const first = chunks[i]!.split(" ")[0]!;
      expect(chunks[i - 1]!.slice(-CHUNK_OVERLAP).split(" ")).toContain(first);
      expect(chunks[i]).toContain(chunks[i - 1]!.split(" ").at(-1)!);
    }
    expect(chunks.join(" ")).toContain("word799");
  });
});

describe("citations", () => {
  it("score each passage relative to the best one", () => {
    const match = (score: number, chunk: number) => ({
      documentId: "doc_1",
      title: "t",
      chunk,
      text: "x",
      score,
    });
    expect(citationsOf([match(4, 0), match(1, 3)])).toEqual([
      { documentId: "doc_1", chunk: 0, score: 1 },
      { documentId: "doc_1", chunk: 3, score: 0.25 },
    ]);
    expect(citationsOf([])).toEqual([]);
  });
});
