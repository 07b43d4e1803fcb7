// @vitest-environment happy-dom
import { render } from "preact";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentsPage } from "./agents";
import { WebhooksPage } from "./webhooks";

afterEach(() => {
  vi.unstubAllGlobals();
  document.body.innerHTML = "";
});

async function until(check: () => boolean) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

describe("a list whose load fails", () => {
  for (const [name, Page] of [
    ["agents", AgentsPage],
    ["webhooks", WebhooksPage],
  ] as const) {
    it(`${name}: shows the API's error alone, not also a loading state that never ends`, async () => {
      vi.stubGlobal(
        "fetch",
        async () =>
          new Response(
            JSON.stringify({
              success: false,
              error: { code: "RATE_LIMITED", message: "Too many requests: try again in 12 seconds." },
            }),
            { status: 429, headers: { "content-type": "application/json", "retry-after": "12" } },
          ),
      );
      const root = document.createElement("div");
      document.body.append(root);
      render(<Page />, root);
      await until(() => root.textContent?.includes("Too many requests") === true);
      expect(root.querySelector('[aria-busy="true"]')).toBeNull();
    });
  }
});
