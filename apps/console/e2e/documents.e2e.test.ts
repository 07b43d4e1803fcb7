import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessibilityViolations, openConsole, type RunningServer, request, screenshot } from "./harness.js";

/**
 * The agent page's documents panel in Chromium against the real server: an imported character's knowledge file
 * shown as missing, a Markdown file dropped on the drop zone uploaded as the answer to it and listed, a file of
 * another type refused through the picker with the server's words, and the document deleted after confirmation.
 */
let server: RunningServer;
let page: Page;
let adminKey = "";
const ACCOUNT = "console-documents";

let opened: Awaited<ReturnType<typeof openConsole>> | undefined;

beforeAll(async () => {
  opened = await openConsole(ACCOUNT);
  ({ server, adminKey, page } = opened);
}, 120_000);

afterAll(() => opened?.close());

interface StoredDocument {
  id: string;
  title: string;
  contentType: string;
  chunks: number;
  source: string | null;
}

describe("the agent page's documents", () => {
  it("uploads a dropped Markdown file for a missing reference, lists it, refuses another type, and deletes it", async () => {
    const imported = await request(server, adminKey, "POST", "/v1/agents/import", {
      name: "Kettle",
      modelProvider: "openai",
      knowledge: ["Water boils at 100 °C.", { path: "manuals/kettle.md" }],
    });
    expect(imported.status).toBe(201);
    const agentId = (imported.body!.data as { id: string }).id;
    await page.goto(`${server.url}/console/agents/${agentId}/edit`);
    const panel = page.locator("section.documents");
    await page.getByRole("heading", { level: 2, name: "Documents" }).waitFor();
    await panel.getByText("This agent has no documents.").waitFor();
    await panel.getByText("at most 10 MiB each").waitFor();
    const missing = panel.locator(".missing-knowledge");
    await missing.getByText("manuals/kettle.md", { exact: true }).waitFor();

    await panel.getByLabel("Answers").selectOption("manuals/kettle.md");
    // A drop as the browser makes one: a DataTransfer holding a File, built in the page.
    const transfer = await page.evaluateHandle(() => {
      const data = new DataTransfer();
      const text =
        "# Descaling\n\nFill the kettle with equal parts water and vinegar, boil, and rinse twice.\n";
      data.items.add(new File([text], "kettle.md", { type: "text/markdown" }));
      return data;
    });
    await panel.locator("fieldset.upload-documents").dispatchEvent("dragover", { dataTransfer: transfer });
    await panel.locator("fieldset.upload-documents").dispatchEvent("drop", { dataTransfer: transfer });
    await panel.getByText("Uploaded: kettle.md (1 chunk).").waitFor();
    const row = panel.locator("tr[data-document]");
    await row.getByText("kettle.md", { exact: true }).waitFor();
    await row.getByText("Markdown", { exact: true }).waitFor();
    await row.getByText("88 B", { exact: true }).waitFor();
    await missing.waitFor({ state: "detached" });

    const listed = await request(server, adminKey, "GET", `/v1/agents/${agentId}/documents`);
    const documents = listed.body!.data as StoredDocument[];
    expect(documents).toHaveLength(1);
    const stored = documents[0]!;
    expect(stored).toMatchObject({
      title: "kettle.md",
      contentType: "text/markdown",
      chunks: 1,
      source: "manuals/kettle.md",
    });
    const knowledge = await request(server, adminKey, "GET", `/v1/agents/${agentId}/knowledge-sources`);
    expect((knowledge.body!.data as { missing: string[] }).missing).toEqual([]);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, "documents-panel");

    // The picker takes any file; the server decides, and its words are shown beside the file's name.
    await panel.getByLabel("Files (choose or drop them here)").setInputFiles({
      name: "diagram.png",
      mimeType: "image/png",
      buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    });
    const refusal = panel.locator('[data-refused="diagram.png"]');
    await refusal.getByText(/"image\/png" are not supported; upload one of/).waitFor();
    await refusal.getByText(/UNSUPPORTED_MEDIA_TYPE/).waitFor();
    expect(await row.count()).toBe(1);

    await row.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete document" }).click();
    await panel.getByText("This agent has no documents.").waitFor();
    await panel.getByText('Document "kettle.md" deleted.').waitFor();
    const gone = await request(server, adminKey, "GET", `/v1/agents/${agentId}/documents/${stored.id}`);
    expect(gone.status).toBe(404);
    await missing.getByText("manuals/kettle.md", { exact: true }).waitFor();
  }, 60_000);
});
