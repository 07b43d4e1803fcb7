import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { CreateEmbeddingResponse, EmbeddingCreateParams } from "openai/resources/embeddings";

/** Words the fake treats as one meaning, as a real model places them near each other. */
const SYNONYMS: Record<string, string> = {
  puppy: "dog",
  hound: "dog",
  canine: "dog",
  pooch: "dog",
  kitten: "cat",
  feline: "cat",
  automobile: "car",
  vehicle: "car",
  physician: "doctor",
  medic: "doctor",
  beverage: "drink",
  hiking: "hike",
  trekking: "hike",
  vegan: "vegetarian",
  spouse: "wife",
  partner: "wife",
  residence: "home",
  house: "home",
  lives: "home",
  live: "home",
  employer: "work",
  job: "work",
  works: "work",
};

export interface FakeEmbeddingsOptions {
  /** The length of every vector; 256 by default. */
  dimensions?: number;
}

/**
 * A local server speaking OpenAI's `POST /v1/embeddings`, with deterministic vectors: a hashed bag of the text's
 * words (lower case, a small synonym table folding words of one meaning together), so that texts sharing words
 * or meanings are near and the others are not. `failWith(status)` makes the next requests fail with OpenAI's
 * error body; `requests` counts what was asked.
 *
 * ```ts
 * const embeddings = await startFakeEmbeddings();
 * // EMBEDDINGS_PROVIDER=openai EMBEDDINGS_BASE_URL=embeddings.baseURL
 * ```
 */
export class FakeEmbeddingsServer {
  readonly dimensions: number;
  /** The inputs of every request answered or refused, in order. */
  readonly inputs: string[][] = [];
  private failures: number[] = [];
  private failAll: number | undefined;
  private readonly server: Server;

  constructor(options: FakeEmbeddingsOptions = {}) {
    this.dimensions = options.dimensions ?? 256;
    this.server = createServer((request, response) => {
      this.answer(request, response).catch(() => response.destroy());
    });
  }

  async listen(): Promise<this> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    return this;
  }

  /** The base URL to configure: `http://127.0.0.1:<port>/v1`. */
  get baseURL(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** The next request (or every one, with `always`) fails with this status. */
  failWith(status: number, always = false): void {
    if (always) this.failAll = status;
    else this.failures.push(status);
  }

  /** Requests are answered again. */
  recover(): void {
    this.failAll = undefined;
    this.failures = [];
  }

  /** The vector this fake gives `text`, unit length. */
  vector(text: string): number[] {
    const vector = new Array<number>(this.dimensions).fill(0);
    for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const meaning = SYNONYMS[word] ?? word;
      vector[hash(meaning) % this.dimensions]! += 1;
    }
    const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
    return norm === 0 ? vector : vector.map((value) => value / norm);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, "close");
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== "POST" || !request.url?.endsWith("/embeddings")) {
      return send(response, 404, {
        error: { message: "Not found.", type: "invalid_request_error", code: null },
      });
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as EmbeddingCreateParams;
    const input = typeof body.input === "string" ? [body.input] : (body.input as string[]);
    this.inputs.push(input);
    const status = this.failures.shift() ?? this.failAll;
    if (status !== undefined) {
      return send(response, status, {
        error: {
          message: "The server had an error processing your request.",
          type: "server_error",
          code: null,
        },
      });
    }
    const answer: CreateEmbeddingResponse = {
      object: "list",
      model: body.model,
      data: input.map((text, index) => ({ object: "embedding", index, embedding: this.vector(text) })),
      usage: {
        prompt_tokens: input.join(" ").split(/\s+/).length,
        total_tokens: input.join(" ").split(/\s+/).length,
      },
    };
    send(response, 200, answer);
  }
}

/** Starts a fake embeddings server on a free loopback port. */
export function startFakeEmbeddings(options?: FakeEmbeddingsOptions): Promise<FakeEmbeddingsServer> {
  return new FakeEmbeddingsServer(options).listen();
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** FNV-1a, 32 bits. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
