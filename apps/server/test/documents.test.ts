import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Harness, Tenant } from "./harness.js";
import {
  type Answer,
  expectError,
  type HistoryWorld,
  newAgent,
  type Page,
  startHistoryWorld,
} from "./history-helpers.js";

let world: HistoryWorld;
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  world = await startHistoryWorld();
  ({ h, tenant } = world);
});
afterAll(() => world.close());
beforeEach(() => world.openai.reset());

interface DocumentJson {
  id: string;
  agentId: string;
  title: string;
  contentType: string;
  sizeBytes: number;
  textLength: number;
  chunks: number;
  source: string | null;
  createdAt: string;
}
interface Citation {
  documentId: string;
  chunk: number;
  score: number;
}

const PDF = readFileSync(
  new URL("../../../services/conversation/test/fixtures/lighthouse.pdf", import.meta.url),
);

/** Uploads a file as multipart/form-data, as a browser's form or `curl -F` sends it. */
async function upload(
  agentId: string,
  file: { name: string; type: string; content: string | Uint8Array },
  fields: Record<string, string> = {},
  key = tenant.key,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  body: { success: boolean; data: DocumentJson; error?: { code: string; message: string } };
  replayed: string | null;
}> {
  const form = new FormData();
  form.append("file", new Blob([file.content], { type: file.type }), file.name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const res = await fetch(`${h.url}/v1/agents/${agentId}/documents`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, ...headers },
    body: form,
  });
  return {
    status: res.status,
    body: (await res.json()) as never,
    replayed: res.headers.get("idempotent-replayed"),
  };
}

const systemPrompt = () =>
  String(world.openai.lastRequest.body.messages?.find((m) => m.role === "system")?.content ?? "");

async function ask(agentId: string, text: string) {
  const res = await h.request<{ data: { id: string; citations?: Citation[] } }>(
    "POST",
    `/v1/agents/${agentId}/messages`,
    { key: tenant.key, body: { text } },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe("/v1/agents/{agentId}/documents", () => {
  it.each([
    [
      "hours.txt",
      "text/plain",
      "Opening hours\nThe reading room opens at nine.",
      "When does the reading room open?",
      "reading room opens at nine",
    ],
    [
      "ferries.md",
      "text/markdown",
      "# Ferries\n\nThe ferry to Mull leaves at 07:30.",
      "When does the ferry to Mull leave?",
      "ferry to Mull leaves",
    ],
    [
      "bakery.html",
      "text/html",
      "<h1>Bakery</h1><p>The sourdough <b>loaf</b> is baked at dawn.</p>",
      "When is the sourdough baked?",
      "sourdough loaf is baked",
    ],
    [
      "lighthouse.pdf",
      "application/pdf",
      new Uint8Array(PDF),
      "What does the Skerryvore lamp burn?",
      "lamp burns paraffin",
    ],
  ] as const)("uploads %s, answers from it and cites it", async (name, type, content, question, passage) => {
    const agentId = await newAgent(h, tenant.key);
    const created = await upload(agentId, { name, type, content });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const document = created.body.data;
    expect(document).toMatchObject({ agentId, title: name, contentType: type, chunks: 1, source: null });
    expect(document.id).toMatch(/^doc_[0-9A-HJKMNP-TV-Z]{26}$/);

    const reply = await ask(agentId, question);
    expect(systemPrompt()).toContain(passage);
    expect(systemPrompt()).toContain(`(${document.id}, chunk 0)`);
    expect(reply.citations).toEqual([{ documentId: document.id, chunk: 0, score: 1 }]);
    const stored = await h.request<{ data: { citations?: Citation[] } }>(
      "GET",
      `/v1/agents/${agentId}/messages/${reply.id}`,
      { key: tenant.key },
    );
    expect(stored.body.data.citations).toEqual(reply.citations);
  });

  it("lists, reads and deletes documents; a deleted one reaches no later prompt", async () => {
    const agentId = await newAgent(h, tenant.key);
    const first = (
      await upload(agentId, { name: "a.txt", type: "text/plain", content: "Kettles boil water." })
    ).body.data;
    const second = (
      await upload(
        agentId,
        {
          name: "b.bin",
          type: "application/octet-stream",
          content: "# Skerryvore\nThe lamp burns paraffin.",
        },
        { title: "Lamp notes" },
      )
    ).body.data;
    // A file sent as application/octet-stream is read by its name's extension (.bin: none): refused.
    expect(second).toBeUndefined();
    const lamp = (
      await upload(
        agentId,
        {
          name: "lamp.md",
          type: "application/octet-stream",
          content: "# Skerryvore\nThe lamp burns paraffin.",
        },
        { title: "Lamp notes" },
      )
    ).body.data;
    expect(lamp).toMatchObject({ title: "Lamp notes", contentType: "text/markdown" });

    const page = await h.request<Page<DocumentJson>>("GET", `/v1/agents/${agentId}/documents?limit=1`, {
      key: tenant.key,
    });
    expect(page.body.data.map((d) => d.id)).toEqual([lamp.id]);
    expect(page.body.pagination.hasMore).toBe(true);
    const next = await h.request<Page<DocumentJson>>(
      "GET",
      `/v1/agents/${agentId}/documents?limit=1&before=${lamp.id}`,
      { key: tenant.key },
    );
    expect(next.body.data.map((d) => d.id)).toEqual([first.id]);
    const read = await h.request<{ data: DocumentJson }>(
      "GET",
      `/v1/agents/${agentId}/documents/${first.id}`,
      {
        key: tenant.key,
      },
    );
    expect(read.body.data).toEqual(first);

    expect((await ask(agentId, "What does the Skerryvore lamp burn?")).citations).toHaveLength(1);
    const removed = await h.request("DELETE", `/v1/agents/${agentId}/documents/${lamp.id}`, {
      key: tenant.key,
    });
    expect(removed.body).toEqual({ success: true, data: { id: lamp.id, deleted: true } });
    const after = await ask(agentId, "What does the Skerryvore lamp burn?");
    expect(after.citations).toBeUndefined();
    expect(systemPrompt()).not.toContain("paraffin");
    expectError(
      (await h.request("DELETE", `/v1/agents/${agentId}/documents/${lamp.id}`, {
        key: tenant.key,
      })) as Answer<object>,
      404,
      "DOCUMENT_NOT_FOUND",
    );
    expectError(
      (await h.request("GET", `/v1/agents/${agentId}/documents/doc_nope`, {
        key: tenant.key,
      })) as Answer<object>,
      404,
      "DOCUMENT_NOT_FOUND",
    );
  });

  it("replays an upload retried under its Idempotency-Key, and refuses another file or form under it", async () => {
    const agentId = await newAgent(h, tenant.key);
    const file = { name: "tides.md", type: "text/markdown", content: "# Tides\nHigh water at noon." };
    const headers = { "Idempotency-Key": `upload-${agentId}` };
    const first = await upload(agentId, file, { title: "Tides" }, tenant.key, headers);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    // The same file and fields again (a new form, so a new boundary): the first answer, once stored.
    const again = await upload(agentId, file, { title: "Tides" }, tenant.key, headers);
    expect(again.status).toBe(201);
    expect(again.replayed).toBe("true");
    expect(again.body.data.id).toBe(first.body.data.id);
    // Another file, or the same file with another title, under the same key: refused, and nothing stored.
    for (const [other, fields] of [
      [{ ...file, content: "# Tides\nHigh water at one." }, { title: "Tides" }],
      [file, { title: "Tide tables" }],
      [{ ...file, name: "tides.txt" }, { title: "Tides" }],
    ] as const) {
      const refused = await upload(agentId, other, fields, tenant.key, headers);
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.error?.code).toBe("IDEMPOTENCY_KEY_REUSED");
    }
    const listed = await h.request<Page<DocumentJson>>("GET", `/v1/agents/${agentId}/documents`, {
      key: tenant.key,
    });
    expect(listed.body.data.map((d) => d.id)).toEqual([first.body.data.id]);
  });

  it("takes JSON too: text, or a file in base64", async () => {
    const agentId = await newAgent(h, tenant.key);
    const text = await h.request<{ data: DocumentJson }>("POST", `/v1/agents/${agentId}/documents`, {
      key: tenant.key,
      body: { title: "Tides", contentType: "text/markdown", text: "# Tides\nHigh water at noon." },
    });
    expect(text.status, JSON.stringify(text.body)).toBe(201);
    expect(text.body.data).toMatchObject({ title: "Tides", contentType: "text/markdown" });
    const pdf = await h.request<{ data: DocumentJson }>("POST", `/v1/agents/${agentId}/documents`, {
      key: tenant.key,
      body: { contentType: "application/pdf", contentBase64: PDF.toString("base64") },
    });
    expect(pdf.status, JSON.stringify(pdf.body)).toBe(201);
    expect(pdf.body.data.sizeBytes).toBe(PDF.length);
    expectError(
      (await h.request("POST", `/v1/agents/${agentId}/documents`, {
        key: tenant.key,
        body: { text: "a", contentBase64: "YQ==" },
      })) as Answer<object>,
      400,
      "INVALID_REQUEST",
      "text",
    );
  });

  it("refuses a type it does not read, naming those it does, a file over 10 MiB, and a file without text", async () => {
    const agentId = await newAgent(h, tenant.key);
    const png = await upload(agentId, {
      name: "a.png",
      type: "image/png",
      content: new Uint8Array([137, 80]),
    });
    expect(png.status).toBe(415);
    expect(png.body.error?.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(png.body.error?.message).toContain("text/plain, text/markdown, text/html, application/pdf");
    const big = await upload(agentId, {
      name: "big.txt",
      type: "text/plain",
      content: new Uint8Array(10 * 1024 * 1024 + 1).fill(97),
    });
    expect(big.status).toBe(413);
    expect(big.body.error?.code).toBe("PAYLOAD_TOO_LARGE");
    const blank = await upload(agentId, { name: "blank.txt", type: "text/plain", content: "   " });
    expect(blank.status).toBe(400);
    const list = await h.request<Page<DocumentJson>>("GET", `/v1/agents/${agentId}/documents`, {
      key: tenant.key,
    });
    expect(list.body.data).toEqual([]);
  });

  it("keeps each agent's documents to itself, and needs agents:write to upload", async () => {
    const agentId = await newAgent(h, tenant.key);
    const other = await h.tenant();
    const theirs = await newAgent(h, other.key);
    const mine = (await upload(agentId, { name: "a.txt", type: "text/plain", content: "Skerryvore lamp." }))
      .body.data;
    expectError(
      (await h.request("GET", `/v1/agents/${agentId}/documents/${mine.id}`, {
        key: other.key,
      })) as Answer<object>,
      404,
      "AGENT_NOT_FOUND",
    );
    expectError(
      (await h.request("GET", `/v1/agents/${theirs}/documents/${mine.id}`, {
        key: other.key,
      })) as Answer<object>,
      404,
      "DOCUMENT_NOT_FOUND",
    );
    const reader = await tenant.keyWith(["agents:read"]);
    expect(
      (await upload(agentId, { name: "b.txt", type: "text/plain", content: "x" }, {}, reader.key)).status,
    ).toBe(403);
    const listed = await h.request<Page<DocumentJson>>("GET", `/v1/agents/${agentId}/documents`, {
      key: reader.key,
    });
    expect(listed.body.data.map((d) => d.id)).toEqual([mine.id]);
  });

  it("answers from documents and the user's memories through /v1/chat/completions, citing them", async () => {
    const agentId = await newAgent(h, tenant.key);
    const doc = (
      await upload(agentId, {
        name: "a.txt",
        type: "text/plain",
        content: "The Skerryvore lamp burns paraffin.",
      })
    ).body.data;
    const memory = await h.request("POST", `/v1/agents/${agentId}/memories`, {
      key: tenant.key,
      body: { userId: "keeper", text: "The user keeps the Skerryvore lamp." },
    });
    expect(memory.status, JSON.stringify(memory.body)).toBe(201);
    const question = "What does the Skerryvore lamp burn?";
    const completion = async (body: object) =>
      fetch(`${h.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: agentId, messages: [{ role: "user", content: question }], ...body }),
      });

    const res = await completion({ user: "keeper" });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { object: string; citations?: Citation[] };
    expect(answer.object).toBe("chat.completion");
    expect(answer.citations).toEqual([{ documentId: doc.id, chunk: 0, score: 1 }]);
    expect(systemPrompt()).toContain("lamp burns paraffin");
    expect(systemPrompt()).toContain("The user keeps the Skerryvore lamp.");

    // Streamed: the citations ride on the chunk that finishes; a request without a user recalls no memory.
    const streamed = await (await completion({ stream: true })).text();
    const chunks = streamed
      .split("\n\n")
      .filter((event) => event.startsWith("data: {"))
      .map(
        (event) =>
          JSON.parse(event.slice("data: ".length)) as {
            choices: { finish_reason: string | null }[];
            citations?: Citation[];
          },
      );
    const finishing = chunks.find((chunk) => chunk.choices[0]?.finish_reason);
    expect(finishing?.citations).toEqual([{ documentId: doc.id, chunk: 0, score: 1 }]);
    expect(chunks.filter((chunk) => chunk.citations)).toHaveLength(1);
    expect(systemPrompt()).toContain("lamp burns paraffin");
    expect(systemPrompt()).not.toContain("The user keeps the Skerryvore lamp.");
  });

  it("cites in the stream's completed event and in a background message's reply", async () => {
    const agentId = await newAgent(h, tenant.key);
    const doc = (
      await upload(agentId, {
        name: "a.txt",
        type: "text/plain",
        content: "The Skerryvore lamp burns paraffin.",
      })
    ).body.data;
    const res = await fetch(`${h.url}/v1/agents/${agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "What does the Skerryvore lamp burn?", stream: true }),
    });
    const events = await res.text();
    const completed = events.split("\n\n").find((event) => event.includes("event: message.completed"))!;
    const data = JSON.parse(
      completed
        .split("\n")
        .find((line) => line.startsWith("data: "))!
        .slice(6),
    );
    expect(data.citations).toEqual([{ documentId: doc.id, chunk: 0, score: 1 }]);

    const accepted = await h.request<{ data: { id: string } }>("POST", `/v1/agents/${agentId}/messages`, {
      key: tenant.key,
      body: { text: "What does the Skerryvore lamp burn?", background: true },
    });
    expect(accepted.status).toBe(202);
    let message: { status: string; citations?: Citation[] } = { status: "pending" };
    for (let i = 0; i < 100 && message.status === "pending"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      message = (
        await h.request<{ data: typeof message }>(
          "GET",
          `/v1/agents/${agentId}/messages/${accepted.body.data.id}`,
          {
            key: tenant.key,
          },
        )
      ).body.data;
    }
    expect(message.status).toBe("completed");
    expect(message.citations).toEqual([{ documentId: doc.id, chunk: 0, score: 1 }]);
  });

  it("tells which knowledge files of an imported character are still missing", async () => {
    const imported = await h.request<{ data: { id: string } }>("POST", "/v1/agents/import", {
      key: tenant.key,
      body: {
        name: "Tinker",
        bio: ["Fixes things"],
        knowledge: ["Kettles scale up.", { path: "manuals/bicycle.md" }, { directory: "manuals/kitchen" }],
      },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const agentId = imported.body.data.id;
    const sources = () =>
      h.request<{
        data: { references: { path: string; kind: string; uploaded: boolean }[]; missing: string[] };
      }>("GET", `/v1/agents/${agentId}/knowledge-sources`, { key: tenant.key });
    expect((await sources()).body.data.missing).toEqual(["manuals/bicycle.md", "manuals/kitchen"]);
    const uploaded = await upload(
      agentId,
      { name: "bicycle.md", type: "text/markdown", content: "Oil the chain monthly." },
      { source: "manuals/bicycle.md" },
    );
    expect(uploaded.body.data.source).toBe("manuals/bicycle.md");
    expect((await sources()).body.data).toEqual({
      references: [
        { path: "manuals/bicycle.md", kind: "file", uploaded: true },
        { path: "manuals/kitchen", kind: "folder", uploaded: false },
      ],
      missing: ["manuals/kitchen"],
    });
  });
});
