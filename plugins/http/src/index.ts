import { definePlugin, defineTool } from "@agentry/plugin-kit";
import { z } from "zod";

/** `https://host[:port]/path-prefix` or a bare host name: what one entry of the allow list admits. */
const allowEntry = z
  .string()
  .min(1)
  .max(2048)
  .refine((entry) => allowRule(entry) !== undefined, {
    message:
      "must be a URL prefix (https://api.example.com/v1/) or a host name (api.example.com); http:// only reaches " +
      "a deployment that allows private networks",
  });

const config = z.object({
  /** URL prefixes and host names the tools may call; nothing else is reached. */
  allow: z.array(allowEntry).min(1).max(50),
  /** The most bytes of an answer read; a longer one is cut there and marked `truncated`. */
  maxResponseBytes: z
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024)
    .default(64 * 1024),
  /** The most one request may take. */
  timeoutMs: z.number().int().min(500).max(30_000).default(10_000),
});

export type HttpConfig = z.output<typeof config>;

type AllowRule = { prefix: string } | { host: string };

function allowRule(entry: string): AllowRule | undefined {
  if (/^[a-z0-9.-]+$/i.test(entry) && entry.includes(".") && !entry.startsWith(".")) {
    return { host: entry.toLowerCase() };
  }
  try {
    const url = new URL(entry);
    if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password)
      return undefined;
    if (url.search || url.hash) return undefined;
    return { prefix: url.href };
  } catch {
    return undefined;
  }
}

/** Whether the allow list admits the URL: under one of its prefixes, or https on one of its hosts (any path). */
export function isAllowed(url: URL, allow: readonly string[]): boolean {
  return allow.some((entry) => {
    const rule = allowRule(entry);
    if (!rule) return false;
    if ("host" in rule) return url.protocol === "https:" && url.hostname === rule.host && url.port === "";
    return url.href.startsWith(rule.prefix);
  });
}

const SHOWN_HEADERS = ["content-type", "content-length", "location", "retry-after", "etag", "last-modified"];

async function readCapped(response: Response, max: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: "", truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > max) {
      chunks.push(value.subarray(0, max - size));
      size = max;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  // A character cut at the limit becomes U+FFFD rather than failing the decode.
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), truncated };
}

export const httpPlugin = definePlugin<HttpConfig>({
  name: "http",
  version: "1.0.0",
  description:
    "GET and POST to the HTTPS URLs the agent's config allows (`allow`: URL prefixes or host names), through the " +
    "outbound guard (public addresses only, no redirects followed), with size and time limits.",
  config,
  secrets: [],
  tools: [
    defineTool({
      name: "request",
      description:
        "Make an HTTP GET or POST to an allowed URL and read the answer: its status, main headers and body as text " +
        "(cut at the size limit). Redirects are answered as they are, not followed.",
      input: z.object({
        method: z.enum(["GET", "POST"]).default("GET"),
        url: z
          .string()
          .min(1)
          .max(2048)
          .describe("The full URL, within the agent's allowed prefixes or hosts"),
        headers: z
          .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(1024))
          .optional()
          .describe('Request headers, e.g. {"accept": "application/json"}'),
        body: z
          .string()
          .max(64 * 1024)
          .optional()
          .describe("The body of a POST, e.g. a JSON text"),
      }),
      timeoutMs: 30_000,
      run: async (input, context) => {
        let url: URL;
        try {
          url = new URL(input.url);
        } catch {
          throw new Error(`${JSON.stringify(input.url)} is not an absolute URL`);
        }
        if (!isAllowed(url, context.config.allow)) {
          throw new Error(`${url.href} is not allowed; allowed: ${context.config.allow.join(", ")}`);
        }
        if (input.method === "GET" && input.body !== undefined) throw new Error("a GET takes no body");
        const signal = AbortSignal.any([context.signal, AbortSignal.timeout(context.config.timeoutMs)]);
        const headers = new Headers(input.headers);
        if (input.body !== undefined && !headers.has("content-type")) {
          headers.set(
            "content-type",
            input.body.trimStart().startsWith("{") ? "application/json" : "text/plain",
          );
        }
        let response: Response;
        try {
          response = await context.host.fetch(url, {
            method: input.method,
            headers,
            ...(input.body !== undefined ? { body: input.body } : {}),
            signal,
          });
        } catch (error) {
          throw failure(error, context.signal, context.config.timeoutMs);
        }
        try {
          const { text, truncated } = await readCapped(response, context.config.maxResponseBytes);
          return {
            status: response.status,
            headers: Object.fromEntries(
              SHOWN_HEADERS.flatMap((name) => {
                const value = response.headers.get(name);
                return value === null ? [] : [[name, value]];
              }),
            ),
            body: text,
            ...(truncated ? { truncated: true } : {}),
          };
        } catch (error) {
          throw failure(error, context.signal, context.config.timeoutMs);
        }
      },
    }),
  ],
});

/** What the model is told of a failed request: why, in words, and never more than the error's own messages. */
function failure(error: unknown, call: AbortSignal, timeoutMs: number): Error {
  if (call.aborted) return new Error("the call was cancelled");
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return new Error(`the request did not complete within ${timeoutMs} ms`);
  }
  const reasons: string[] = [];
  for (let cause = error; cause instanceof Error && reasons.length < 3; cause = cause.cause) {
    reasons.push(cause.message);
  }
  return new Error(`the request failed: ${reasons.join(": ") || String(error)}`);
}
