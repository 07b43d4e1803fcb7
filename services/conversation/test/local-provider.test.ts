import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppError } from "@agentry/errors";
import { silentLogger } from "@agentry/logging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalProvider, type LocalProvider } from "../src/index.js";
import { LOOP_MIN_RUN } from "../src/providers/local/repetition.js";
import type { ProviderEvent, ProviderRequest } from "../src/providers/types.js";
import { LONG_ANSWER, testModelPath } from "./fixtures/local-model.js";

let provider: LocalProvider;
let modelName: string;
let scratch: string;

beforeAll(async () => {
  const path = await testModelPath();
  scratch = mkdtempSync(join(tmpdir(), "local-provider-"));
  provider = createLocalProvider({
    location: { path, dir: scratch },
    maxQueue: 1,
    gpu: false,
    threads: 1,
    contextSize: 2048,
    replyTimeoutMs: 120_000,
    defaultMaxTokens: 64,
    logger: silentLogger(),
  });
  modelName = provider.defaultModel;
  await provider.warmUp();
}, 120_000);
afterAll(async () => {
  await provider.close();
  rmSync(scratch, { recursive: true, force: true });
});

const request = (text: string, settings: Partial<ProviderRequest> = {}): ProviderRequest => ({
  model: modelName,
  system: "You are Ada, a helpful assistant.",
  messages: [{ role: "user", text }],
  maxTokens: 32,
  ...settings,
});

/** Resolves once `check` holds, polling; fails after `ms`. */
async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("the local provider", () => {
  it("is named after the model file and reports it as the model that answered", async () => {
    expect(provider.name).toBe("local");
    expect(modelName).toBe("SmolLM2-135M-Instruct.Q4_1");
    const result = await provider.complete(
      request("Say hello.", { maxTokens: 8 }),
      new AbortController().signal,
    );
    expect(result.model).toBe(modelName);
    expect(result.text.trim().length).toBeGreaterThan(0);
  });

  it("honours maxTokens and counts the prompt and the generated tokens", async () => {
    const result = await provider.complete(
      request(LONG_ANSWER, { maxTokens: 5, temperature: 0 }),
      new AbortController().signal,
    );
    expect(result.finishReason).toBe("length");
    expect(result.usage.outputTokens).toBe(5);
    // The system prompt and the message, wrapped in the model's chat template.
    expect(result.usage.inputTokens).toBeGreaterThan(20);
    expect(result.usage.inputTokens).toBeLessThan(80);
  });

  it("is deterministic at temperature 0 and varies with a high temperature", async () => {
    const signal = new AbortController().signal;
    const greedy = request("Name three fruits.", { temperature: 0, maxTokens: 8 });
    const first = await provider.complete(greedy, signal);
    const second = await provider.complete(greedy, signal);
    expect(second.text).toBe(first.text);
    // Sampling is random: enough samples, long enough, that all of them matching is practically impossible.
    const hot = request("Name three fruits.", { temperature: 2, maxTokens: 16 });
    const texts = new Set<string>();
    for (let i = 0; i < 10 && texts.size < 2; i++) texts.add((await provider.complete(hot, signal)).text);
    expect(texts.size).toBeGreaterThan(1);
  });

  it("streams text as it is produced, then one done event", async () => {
    const arrivals: number[] = [];
    const events: ProviderEvent[] = [];
    for await (const event of await provider.stream(
      request(LONG_ANSWER, { maxTokens: 24 }),
      new AbortController().signal,
    )) {
      arrivals.push(performance.now());
      events.push(event);
    }
    const deltas = events.filter((event) => event.type === "delta");
    expect(deltas.length).toBeGreaterThan(3);
    expect(events.at(-1)?.type).toBe("done");
    expect(events.filter((event) => event.type === "done").length).toBe(1);
    // Tokens arrive one by one over the generation, not all at the end.
    expect(arrivals.at(-2)! - arrivals[0]!).toBeGreaterThan(50);
  });

  it("stops generating as soon as the signal aborts", async () => {
    const before = provider.stats().generatedTokens;
    const controller = new AbortController();
    const startedAt = performance.now();
    let deltas = 0;
    const read = (async () => {
      for await (const event of await provider.stream(
        request(LONG_ANSWER, { maxTokens: 400, temperature: 0.8 }),
        controller.signal,
      )) {
        if (event.type === "delta" && ++deltas === 3) controller.abort();
      }
    })();
    await expect(read).rejects.toThrow();
    await until(() => provider.stats().active === 0, 2_000);
    const generated = provider.stats().generatedTokens - before;
    expect(generated).toBeGreaterThanOrEqual(3);
    expect(generated).toBeLessThan(10);
    // 400 tokens take well over ten seconds on one thread; the abort ended it in about the time of a few.
    expect(performance.now() - startedAt).toBeLessThan(5_000);
  });

  it("stops generating when the reader leaves early", async () => {
    const before = provider.stats().generatedTokens;
    let deltas = 0;
    for await (const event of await provider.stream(
      request(LONG_ANSWER, { maxTokens: 400, temperature: 0.8 }),
      new AbortController().signal,
    )) {
      if (event.type === "delta" && ++deltas === 3) break;
    }
    await until(() => provider.stats().active === 0, 2_000);
    expect(provider.stats().generatedTokens - before).toBeLessThan(10);
  });

  it("runs one generation at a time, in arrival order, and refuses what the queue cannot hold", async () => {
    const order: string[] = [];
    const run = async (name: string) => {
      const events = await provider.stream(
        request(LONG_ANSWER, { maxTokens: 16 }),
        new AbortController().signal,
      );
      let texts = 0;
      for await (const event of events) {
        if (event.type === "delta" && ++texts === 1) order.push(`${name} first text`);
        if (event.type === "done") order.push(`${name} done`);
      }
    };
    const first = run("first");
    await until(() => provider.stats().active === 1);
    const second = run("second");
    await until(() => provider.stats().waiting === 1);

    // One generating and one waiting fill a queue of one: the next is refused at once.
    const refused = await provider
      .stream(request("hi"), new AbortController().signal)
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe("AGENT_UNAVAILABLE");
    expect((refused as AppError).retryAfterSeconds).toBeGreaterThanOrEqual(1);

    await Promise.all([first, second]);
    expect(order).toEqual(["first first text", "first done", "second first text", "second done"]);
    expect(provider.stats()).toMatchObject({ active: 0, waiting: 0 });
  });

  it("lets a request give up its place in the queue", async () => {
    const first = provider.complete(request(LONG_ANSWER, { maxTokens: 24 }), new AbortController().signal);
    await until(() => provider.stats().active === 1);
    const controller = new AbortController();
    const waiting = provider.stream(request("hi"), controller.signal);
    await until(() => provider.stats().waiting === 1);
    controller.abort();
    await expect(waiting).rejects.toThrow();
    expect(provider.stats().waiting).toBe(0);
    await first;
  });

  it("ends a reply that falls into a loop, finished with length", async () => {
    // At temperature 0 the default model copies a run of full-width plus signs without end.
    const result = await provider.complete(
      request("Write ＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋＋", {
        maxTokens: 400,
        temperature: 0,
      }),
      new AbortController().signal,
    );
    expect(result.finishReason).toBe("length");
    expect(result.text).toMatch(/^(＋)+$/);
    // Ended by the loop detector once 32 tokens repeated, long before the token bound.
    expect(result.usage.outputTokens).toBe(LOOP_MIN_RUN);
  });

  it("refuses a model other than its own with MODEL_ERROR", async () => {
    const error = await provider
      .complete({ ...request("hi"), model: "llama3.2" }, new AbortController().signal)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("MODEL_ERROR");
    expect((error as AppError).message).toContain(`serves one model, "${modelName}"`);
  });
});

describe("a local reply's time limit", () => {
  const limited = async (replyTimeoutMs: number) => {
    const limitedProvider = createLocalProvider({
      location: { path: await testModelPath(), dir: scratch },
      maxQueue: 1,
      gpu: false,
      threads: 1,
      contextSize: 2048,
      replyTimeoutMs,
      defaultMaxTokens: 64,
      logger: silentLogger(),
    });
    await limitedProvider.warmUp();
    return limitedProvider;
  };

  it("ends the reply with what was generated when it passes, finished with length", async () => {
    // Long enough for a first token on a loaded machine, far too short for the 2000 tokens asked for.
    const limitedProvider = await limited(5_000);
    try {
      const events: ProviderEvent[] = [];
      for await (const event of await limitedProvider.stream(
        request(LONG_ANSWER, { model: limitedProvider.defaultModel, maxTokens: 2000, temperature: 0.8 }),
        new AbortController().signal,
      )) {
        events.push(event);
      }
      const done = events.at(-1);
      expect(done?.type).toBe("done");
      if (done?.type !== "done") return;
      expect(done.finishReason).toBe("length");
      expect(done.usage.outputTokens).toBeGreaterThan(0);
      expect(done.usage.outputTokens).toBeLessThan(2000);
      const text = events.map((event) => (event.type === "delta" ? event.text : "")).join("");
      expect(text.length).toBeGreaterThan(0);
      expect(limitedProvider.stats()).toMatchObject({ active: 0, waiting: 0 });
    } finally {
      await limitedProvider.close();
    }
  });

  it("fails a reply that waited for its turn the whole time with AGENT_UNAVAILABLE", async () => {
    const limitedProvider = await limited(1);
    try {
      const ask = () =>
        limitedProvider
          .complete(
            request(LONG_ANSWER, { model: limitedProvider.defaultModel, maxTokens: 100 }),
            new AbortController().signal,
          )
          .catch((error: unknown) => error);
      // The first takes the model; the second waits behind it for longer than its 1 ms.
      const [first, second] = await Promise.all([ask(), ask()]);
      expect(second).toBeInstanceOf(AppError);
      expect((second as AppError).code).toBe("AGENT_UNAVAILABLE");
      expect((second as AppError).message).toContain("within 1 ms (LOCAL_REPLY_TIMEOUT_MS)");
      expect((second as AppError).retryAfterSeconds).toBe(1);
      // The first had the model from the start: cut short with what it had, or failed alike if that was nothing.
      if (first instanceof AppError) expect(first.code).toBe("AGENT_UNAVAILABLE");
      else expect(first).toMatchObject({ finishReason: "length" });
      expect(limitedProvider.stats()).toMatchObject({ active: 0, waiting: 0 });
    } finally {
      await limitedProvider.close();
    }
  });
});

describe("a local model that cannot be loaded", () => {
  const attempt = async (path: string) => {
    const broken = createLocalProvider({
      location: { path, dir: scratch },
      maxQueue: 1,
      gpu: false,
      threads: 1,
      contextSize: 512,
      replyTimeoutMs: 120_000,
      defaultMaxTokens: 64,
      logger: silentLogger(),
    });
    try {
      return await broken
        .complete({ ...request("hi"), model: broken.defaultModel }, new AbortController().signal)
        .then(() => undefined)
        .catch((error: unknown) => error as AppError);
    } finally {
      await broken.close();
    }
  };

  it("is MODEL_ERROR naming LOCAL_MODEL_PATH when the file is missing or not GGUF", async () => {
    const missing = await attempt(join(scratch, "missing.gguf"));
    expect(missing?.code).toBe("MODEL_ERROR");
    expect(missing?.message).toMatch(/LOCAL_MODEL_PATH is .*missing\.gguf, but it does not exist/);
    expect(missing?.message).toContain("DEFAULT_MODEL_PROVIDER=openai with OPENAI_API_KEY");

    const text = join(scratch, "text.gguf");
    writeFileSync(text, "not a model at all");
    expect((await attempt(text))?.message).toContain("it is not a GGUF model file");
  });

  it("is MODEL_ERROR saying it could not be loaded when llama.cpp rejects a GGUF file", async () => {
    const truncated = join(scratch, "truncated.gguf");
    writeFileSync(truncated, Buffer.concat([Buffer.from("GGUF"), Buffer.alloc(64, 7)]));
    const error = await attempt(truncated);
    expect(error?.code).toBe("MODEL_ERROR");
    expect(error?.message).toMatch(/could not be loaded from LOCAL_MODEL_PATH \(.*truncated\.gguf\)/);
  });
});
