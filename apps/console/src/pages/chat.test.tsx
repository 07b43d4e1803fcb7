// @vitest-environment happy-dom
import { render } from "preact";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatPage } from "./chat";
import { liveRuns } from "./chat-runs";

const AGENT = { id: "agt_01JAAAAAAAAAAAAAAAAAAAAAAA", name: "Ada", status: "active" };

function sse(events: [string, unknown][]): string {
  return events
    .map(([event, data], i) => `id: ${i + 1}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
}

function json(data: unknown): Response {
  return new Response(JSON.stringify({ success: true, data, pagination: { hasMore: false } }), {
    headers: { "content-type": "application/json" },
  });
}

/** The API as the page sees it: the agent list, an empty history, then a streamed reply of these events. */
function serve(stream: string | Response) {
  const sent: { url: string; body: unknown }[] = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit = {}) => {
    if (url.startsWith("/v1/agents?")) return json([AGENT]);
    if (url.startsWith(`/v1/agents/${AGENT.id}/conversations?`)) return json([]);
    sent.push({ url, body: JSON.parse(String(init.body)) });
    return typeof stream === "string"
      ? new Response(stream, { headers: { "content-type": "text/event-stream" } })
      : stream;
  });
  return sent;
}

async function until(check: () => boolean) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

async function chat(text: string) {
  const root = document.createElement("div");
  document.body.append(root);
  render(<ChatPage />, root);
  await until(() => root.querySelector("option")?.textContent === "Ada (active)");
  const box = root.querySelector("textarea")!;
  box.value = text;
  box.dispatchEvent(new Event("input", { bubbles: true }));
  await until(() => !(root.querySelector("button[type=submit]") as HTMLButtonElement).disabled);
  root
    .querySelector("form.composer")!
    .dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
  return root;
}

afterEach(() => {
  // The replies live beside the page, for as long as the tab: each test starts with none.
  liveRuns.set([]);
  vi.unstubAllGlobals();
  document.body.innerHTML = "";
});

describe("ChatPage", () => {
  it("sends a streamed message and shows the reply, its tool calls inline, and what it cost", async () => {
    const sent = serve(
      sse([
        ["message.started", { id: "msg_1" }],
        ["message.delta", { text: "Let me " }],
        ["tool.call", { id: "call_1", name: "http.get", arguments: { url: "https://example.com" } }],
        ["tool.result", { id: "call_1", name: "http.get", ok: true, output: "200 OK" }],
        ["message.delta", { text: "check: **fine**." }],
        [
          "message.completed",
          {
            text: "Let me check: **fine**.",
            model: "gpt-4o-mini",
            modelProvider: "openai",
            usage: { totalTokens: 12 },
            latencyMs: 40,
          },
        ],
      ]),
    );
    const root = await chat("Is it up?");
    await until(() => root.textContent?.includes("12 tokens") ?? false);
    expect(sent).toEqual([
      {
        url: `/v1/agents/${AGENT.id}/messages`,
        body: { text: "Is it up?", stream: true, onDisconnect: "continue", userId: "console-user" },
      },
    ]);
    const reply = root.querySelector(".turn.assistant")!;
    expect(reply.querySelector("strong")?.textContent).toBe("fine");
    expect(reply.querySelector("details.tool summary")?.textContent).toContain("http.get");
    expect(reply.querySelector("details.tool summary")?.textContent).toContain("done");
    expect(reply.querySelector("details.tool pre")?.textContent).toContain("200 OK");
    expect(reply.getAttribute("aria-busy")).toBeNull();
  });

  it("shows an error event as the API words it", async () => {
    serve(
      sse([
        ["message.started", { id: "msg_1" }],
        ["error", { code: "MODEL_ERROR", message: "The provider refused the call." }],
      ]),
    );
    const root = await chat("Hello");
    await until(() => root.querySelector("[role=alert]") !== null);
    // The message first, the code after it as a reference.
    expect(root.querySelector("[role=alert]")?.textContent).toContain(
      "The provider refused the call. (MODEL_ERROR)",
    );
  });

  it("shows a refusal before the stream, with its code and request id", async () => {
    const refusal = {
      success: false,
      error: { code: "AGENT_INACTIVE", message: "Agent is inactive.", requestId: "req_1" },
    };
    serve(
      new Response(JSON.stringify(refusal), { status: 409, headers: { "content-type": "application/json" } }),
    );
    const root = await chat("Hello");
    await until(() => root.querySelector("[role=alert]") !== null);
    const alert = root.querySelector("[role=alert]")?.textContent ?? "";
    expect(alert).toContain("Agent is inactive. (AGENT_INACTIVE");
    expect(alert).toContain("req_1");
  });
});
