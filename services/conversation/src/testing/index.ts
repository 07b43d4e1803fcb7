/**
 * Test helpers: local servers that speak the real OpenAI and Anthropic wire formats, so the real provider clients
 * (and everything above them) can be exercised without a network. They import no test framework, so a launcher
 * process may use them too; the stores' contract suite, which imports vitest, is `./testing/store-contract`.
 *
 * ```ts
 * const openai = await startFakeOpenAI();
 * // OPENAI_BASE_URL=openai.baseURL, OPENAI_API_KEY=anything
 * openai.reply("Hello!");                                 // the next request is answered "Hello!"
 * openai.failWith(429, { headers: { "retry-after": "7" } });
 * openai.reply("slow", { delayMs: 500, chunkDelayMs: 50 });
 * openai.cutAfter(2);                                     // the next stream is cut after two text chunks
 * expect(openai.lastRequest.body.messages[0].content).toContain("You are Ada");
 * await openai.close();
 * ```
 */
export {
  type AnthropicMessagesBody,
  anthropicFormat,
  startFakeAnthropic,
} from "./fake-anthropic.js";
export {
  type FakeEmbeddingsOptions,
  FakeEmbeddingsServer,
  startFakeEmbeddings,
} from "./fake-embeddings.js";
export { type OpenAIChatBody, openAIFormat, startFakeOpenAI } from "./fake-openai.js";
export {
  type FakeAnswer,
  type FakeProviderOptions,
  FakeProviderServer,
  type RecordedRequest,
} from "./fake-server.js";
