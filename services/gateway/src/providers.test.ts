import { silentLogger } from "@agentry/logging";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ProviderCatalog, type ServedProviders } from "./providers.js";

const answer = (defaultProvider: string): ServedProviders => ({
  providers: [{ name: "openai", defaultModel: "gpt-4o-mini", models: [] }],
  defaultProvider,
});

/** A catalog over a scripted conversation service: each load takes the next outcome. */
function catalog(outcomes: (ServedProviders | Error)[]) {
  let loads = 0;
  const provider = new ProviderCatalog({
    load: async () => {
      const outcome = outcomes[Math.min(loads, outcomes.length - 1)]!;
      loads += 1;
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    ttlMs: 1000,
    retryMs: 100,
    logger: silentLogger(),
  });
  return { provider, loads: () => loads };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the provider catalog", () => {
  it("asks once, and shares one question between callers", async () => {
    const { provider, loads } = catalog([answer("openai")]);
    const [a, b] = await Promise.all([provider.get(), provider.get()]);
    expect(a).toEqual(answer("openai"));
    expect(b).toBe(a);
    await provider.get();
    expect(loads()).toBe(1);
  });

  it("answers with what it knows once that is old, and asks again behind the caller's back", async () => {
    const { provider, loads } = catalog([answer("openai"), answer("local")]);
    await provider.get();
    vi.advanceTimersByTime(1001);
    expect(await provider.get()).toEqual(answer("openai"));
    await vi.waitFor(() => expect(loads()).toBe(2));
    await vi.waitFor(async () => expect(await provider.get()).toEqual(answer("local")));
  });

  it("keeps what it knows when asking again fails", async () => {
    const { provider } = catalog([answer("openai"), new Error("down")]);
    await provider.get();
    vi.advanceTimersByTime(1001);
    expect(await provider.get()).toEqual(answer("openai"));
    expect(await provider.get()).toEqual(answer("openai"));
  });

  it("knowing nothing, answers undefined when the service fails, and asks again only after a pause", async () => {
    const { provider, loads } = catalog([new Error("down"), answer("openai")]);
    expect(await provider.get()).toBeUndefined();
    expect(await provider.get()).toBeUndefined();
    expect(loads()).toBe(1);
    vi.advanceTimersByTime(101);
    expect(await provider.get()).toEqual(answer("openai"));
  });
});
