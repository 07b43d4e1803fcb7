import { describe, expect, it } from "vitest";
import type { Document } from "../src/index.js";
import { AGENT_ID, clientWith, json } from "./helpers.js";

const DOCUMENT: Document = {
  id: "doc_01JAAAAAAAAAAAAAAAAAAAAAAA",
  agentId: AGENT_ID,
  title: "Hours",
  contentType: "text/markdown",
  sizeBytes: 12,
  textLength: 12,
  chunks: 1,
  source: "docs/hours.md",
  createdAt: "2026-11-20T09:30:00.000Z",
};

describe("an agent's documents", () => {
  it("uploads a file as multipart/form-data, with its name, title and source", async () => {
    const seen: { url: string; headers: Headers; body: unknown }[] = [];
    const client = clientWith(async (url, init) => {
      seen.push({ url, headers: new Headers(init.headers), body: init.body });
      return json(201, { success: true, data: DOCUMENT });
    });
    const file = new Blob(["# Hours\nNine."], { type: "text/markdown" });
    const stored = await client.agents.documents.upload(AGENT_ID, file, {
      fileName: "hours.md",
      title: "Hours",
      source: "docs/hours.md",
    });
    expect(stored).toEqual(DOCUMENT);
    expect(seen[0]!.url).toBe(`http://api.test/v1/agents/${AGENT_ID}/documents`);
    // The runtime sets the multipart type with its boundary; the SDK must not claim JSON.
    expect(seen[0]!.headers.get("content-type")).toBeNull();
    const form = seen[0]!.body as FormData;
    expect(form).toBeInstanceOf(FormData);
    expect((form.get("file") as File).name).toBe("hours.md");
    expect(await (form.get("file") as File).text()).toBe("# Hours\nNine.");
    expect(form.get("title")).toBe("Hours");
    expect(form.get("source")).toBe("docs/hours.md");
  });

  it("creates one from JSON and reads the character's missing knowledge files", async () => {
    const bodies: unknown[] = [];
    const client = clientWith(async (url, init) => {
      bodies.push(typeof init.body === "string" ? JSON.parse(init.body) : undefined);
      return url.endsWith("/knowledge-sources")
        ? json(200, { success: true, data: { references: [], missing: ["manuals"] } })
        : json(201, { success: true, data: DOCUMENT });
    });
    await client.agents.documents.create(AGENT_ID, { contentType: "text/markdown", text: "# Hours" });
    expect(bodies[0]).toEqual({ contentType: "text/markdown", text: "# Hours" });
    expect((await client.agents.documents.sources(AGENT_ID)).missing).toEqual(["manuals"]);
  });
});
