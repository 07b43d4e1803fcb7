import { DOCUMENT_BOUNDS, newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { JsonObject } from "@bufbuild/protobuf";
import { convert } from "html-to-text";
import { turnTokens } from "./history.js";
import { fuseRankings, RRF_K } from "./memories.js";
import type { ChunkMatch, CitationRecord, NewDocument } from "./store/types.js";

/*
 * The rules of knowledge documents (docs/api/documents.md): which files are read and how, how their text is cut
 * into chunks, which chunks reach a prompt and how they read there. The stores only keep and search what these make.
 */

/** The media types a document may be uploaded as. */
export const DOCUMENT_TYPES = ["text/plain", "text/markdown", "text/html", "application/pdf"] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/**
 * Characters of a chunk: about 300 tokens, small enough that a few of them fit a prompt's budget, large enough to
 * hold a paragraph whole.
 */
export const CHUNK_CHARACTERS = 1200;

/** Characters each chunk repeats of the one before, so that a sentence cut at a boundary is whole in one of them. */
export const CHUNK_OVERLAP = 200;

/** The most chunks one retrieval reads from the store before the token budget picks among them. */
export const CHUNKS_CONSIDERED = 20;

/** The document type of a Content-Type header value (parameters and case ignored), or null when not supported. */
export function documentType(contentType: string): DocumentType | null {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  // Markdown is often sent under its older unregistered name.
  if (type === "text/x-markdown") return "text/markdown";
  return (DOCUMENT_TYPES as readonly string[]).includes(type) ? (type as DocumentType) : null;
}

/** The answer to a type this service does not read, naming those it does. */
export function unsupportedType(contentType: string): AppError {
  return new AppError(
    "UNSUPPORTED_MEDIA_TYPE",
    `Documents of type ${JSON.stringify(contentType)} are not supported; upload one of ${DOCUMENT_TYPES.join(", ")}.`,
  );
}

/** The answer to a file over `DOCUMENT_BOUNDS.maxBytes`. */
export function documentTooLarge(): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `A document may be at most ${DOCUMENT_BOUNDS.maxBytes / (1024 * 1024)} MiB; split the file and upload the parts.`,
  );
}

/** The plain text of a file of a supported type: HTML without its markup, PDF pages in order, each page's lines. */
export async function documentText(type: DocumentType, content: Uint8Array): Promise<string> {
  let text: string;
  if (type === "application/pdf") {
    try {
      // Loaded on the first PDF: PDF.js is large, and most processes never read one.
      const { extractText, getDocumentProxy } = await import("unpdf");
      const pdf = await getDocumentProxy(new Uint8Array(content));
      text = (await extractText(pdf, { mergePages: false })).text.join("\n\n");
    } catch (error) {
      throw new AppError("INVALID_REQUEST", "The file could not be read as a PDF document.", {
        cause: error,
      });
    }
  } else {
    const decoded = new TextDecoder("utf-8").decode(content);
    text =
      type === "text/html"
        ? convert(decoded, {
            wordwrap: false,
            selectors: [
              { selector: "a", options: { ignoreHref: true } },
              { selector: "img", format: "skip" },
            ],
          })
        : decoded;
  }
  // No store keeps U+0000 as text; carriage returns and runs of blank lines tell nothing.
  return text
    .replaceAll("\u0000", "")
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * The text cut into chunks of at most `CHUNK_CHARACTERS`, each starting `CHUNK_OVERLAP` characters before the end
 * of the one before. A chunk ends at the last paragraph, line or sentence break, else space, in its second half,
 * so that words stay whole.
 */
export function chunkText(text: string, size = CHUNK_CHARACTERS, overlap = CHUNK_OVERLAP): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    if (end < text.length) {
      const window = text.slice(start, end);
      const half = Math.floor(size / 2);
      for (const breaker of ["\n\n", "\n", ". ", " "]) {
        const at = window.lastIndexOf(breaker);
        if (at >= half) {
          end = start + at + breaker.length;
          break;
        }
      }
    }
    const chunk = text.slice(start, end).trim();
    if (chunk) chunks.push(chunk);
    if (end >= text.length) break;
    // Back by the overlap, then forward to a word's start, never behind where this chunk began.
    let next = Math.max(end - overlap, start + 1);
    while (next < end && !/\s/.test(text[next - 1]!)) next += 1;
    start = next;
  }
  return chunks;
}

/** The title of a document: the one given, else the file's name, else the first line of its text; bounded. */
export function documentTitle(given: string, text: string): string {
  const title = given.trim() || text.split("\n", 1)[0]!.trim() || "Untitled";
  return [...title].slice(0, DOCUMENT_BOUNDS.titleMaxLength).join("");
}

/** A document ready to store, from a file already read: its text chunked; INVALID_REQUEST when it has no text. */
export function newDocument(
  input: { title: string; type: DocumentType; sizeBytes: number; source: string },
  text: string,
  at = new Date(),
): NewDocument {
  const chunks = chunkText(text);
  if (chunks.length === 0) {
    throw new AppError("INVALID_REQUEST", "The file has no text to answer from; upload one with text in it.");
  }
  return {
    id: newId("document"),
    title: documentTitle(input.title, text),
    contentType: input.type,
    sizeBytes: input.sizeBytes,
    textLength: text.length,
    source: input.source,
    chunks,
    createdAt: at.toISOString(),
  };
}

/** The most estimated tokens of documents one prompt carries (`settings.knowledgeTokenBudget`). */
export function knowledgeTokenBudget(settings: JsonObject | undefined): number {
  const budget = settings?.knowledgeTokenBudget;
  return typeof budget === "number" ? budget : DOCUMENT_BOUNDS.knowledgeTokenBudget.default;
}

/** The matches, best first, that fit `budget` tokens together, each costed as a turn of history is. */
export function withinBudget(matches: readonly ChunkMatch[], budget: number): ChunkMatch[] {
  const kept: ChunkMatch[] = [];
  let spent = 0;
  for (const match of matches) {
    const cost = turnTokens(match.text);
    if (spent + cost > budget) continue;
    kept.push(match);
    spent += cost;
  }
  return kept;
}

/**
 * A reply's citations: which chunk of which document its prompt carried, and how well it matched, relative to the
 * best of them (1): the stores' full-text ranks have no common scale, their order does.
 */
/**
 * Chunks ranked by full text and by vector, fused as memories are (reciprocal rank fusion, memories.ts
 * `fuseRankings`); a chunk's score is its fused score, so that citations stay relative to the best passage.
 */
export function fuseChunks(rankings: readonly (readonly ChunkMatch[])[], limit: number): ChunkMatch[] {
  const keyOf = (match: ChunkMatch) => `${match.documentId}#${match.chunk}`;
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    for (const [rank, match] of ranking.entries()) {
      scores.set(keyOf(match), (scores.get(keyOf(match)) ?? 0) + 1 / (RRF_K + rank + 1));
    }
  }
  const keyed = rankings.map((ranking) => ranking.map((match) => ({ id: keyOf(match), match })));
  return fuseRankings(keyed, limit).map(({ id, match }) => ({ ...match, score: scores.get(id)! }));
}

export function citationsOf(matches: readonly ChunkMatch[]): CitationRecord[] {
  const best = Math.max(...matches.map((match) => match.score));
  return matches.map((match) => ({
    documentId: match.documentId,
    chunk: match.chunk,
    score: best > 0 ? Math.round((match.score / best) * 1000) / 1000 : 0,
  }));
}

/**
 * The chunks as a section of the system prompt, each under its marker (`[1]`, ...) with the document and chunk it
 * comes from; empty when there are none.
 */
export function knowledgeSection(matches: readonly ChunkMatch[]): string {
  if (matches.length === 0) return "";
  const passages = matches.map(
    (match, index) =>
      `[${index + 1}] ${JSON.stringify(match.title)} (${match.documentId}, chunk ${match.chunk})\n${match.text}`,
  );
  return [
    "Passages from your knowledge documents that may bear on this message. Answer from them where they apply, and name the marker ([1], [2], ...) of each passage you use:",
    ...passages,
  ].join("\n\n");
}
