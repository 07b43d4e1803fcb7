// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../api";
import { formatSize } from "./documents";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("formatSize", () => {
  it("writes bytes, KiB and MiB", () => {
    expect(formatSize(88)).toBe("88 B");
    expect(formatSize(1023)).toBe("1023 B");
    expect(formatSize(1536)).toBe("1.5 KiB");
    expect(formatSize(10 * 1024 * 1024)).toBe("10.0 MiB");
  });
});

describe("an upload", () => {
  it("goes as the form itself, leaving its multipart Content-Type to the browser", async () => {
    const sent: RequestInit[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (_url: string, init: RequestInit) => {
        sent.push(init);
        return new Response(JSON.stringify({ success: true, data: { id: "doc_1" } }), {
          status: 201,
          headers: { "content-type": "application/json" },
        });
      }),
    );
    const form = new FormData();
    form.append("file", new File(["# Notes\n"], "notes.md", { type: "text/markdown" }));
    const { data } = await api<{ id: string }>("POST", "/v1/agents/agt_1/documents", { body: form });
    expect(data.id).toBe("doc_1");
    expect(sent[0]!.body).toBe(form);
    expect((sent[0]!.headers as Record<string, string>)["content-type"]).toBeUndefined();
  });

  it("of JSON still says so", async () => {
    const sent: RequestInit[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (_url: string, init: RequestInit) => {
        sent.push(init);
        return new Response(JSON.stringify({ success: true, data: {} }), { status: 201 });
      }),
    );
    await api("POST", "/v1/agents/agt_1/documents", { body: { text: "Notes" } });
    expect(sent[0]!.body).toBe('{"text":"Notes"}');
    expect((sent[0]!.headers as Record<string, string>)["content-type"]).toBe("application/json");
  });
});
