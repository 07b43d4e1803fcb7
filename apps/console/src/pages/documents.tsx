import type { Document, KnowledgeSources } from "@agentry/sdk";
import { useEffect, useId, useState } from "preact/hooks";
import { api } from "../api";
import { ConfirmButton, ErrorMessage, Field, formatTime, TableScroll, useAction } from "../widgets/common";

const TYPE_NAMES: Record<Document["contentType"], string> = {
  "text/plain": "Text",
  "text/markdown": "Markdown",
  "text/html": "HTML",
  "application/pdf": "PDF",
};

/** What the picker offers; the server reads the type from the file's Content-Type, else from its extension. */
const ACCEPT = ".txt,.md,.markdown,.html,.htm,.pdf,text/plain,text/markdown,text/html,application/pdf";

/** A size in bytes, in the unit a person reads it in. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A file the server refused, with its words. */
interface Refusal {
  name: string;
  error: unknown;
}

/**
 * The agent's knowledge documents: each one's title, type, size, chunks and upload time, with a button to delete it;
 * files uploaded by drop or by the picker; and the knowledge references of an imported character that no document
 * answers yet, which an upload can be made to answer.
 */
export function DocumentsPanel({ agentId }: { agentId: string }) {
  const id = useId();
  const [documents, setDocuments] = useState<Document[] | null>(null);
  const [sources, setSources] = useState<KnowledgeSources | null>(null);
  const [answers, setAnswers] = useState("");
  const [dragging, setDragging] = useState(false);
  const [notice, setNotice] = useState("");
  const [refused, setRefused] = useState<Refusal[]>([]);
  const load = useAction(async () => {
    const [list, knowledge] = await Promise.all([
      api<Document[]>("GET", `/v1/agents/${agentId}/documents`, { query: { limit: "100" } }),
      api<KnowledgeSources>("GET", `/v1/agents/${agentId}/knowledge-sources`),
    ]);
    setDocuments(list.data);
    setSources(knowledge.data);
  });
  useEffect(() => {
    void load.run();
  }, [agentId]);

  const missing = (sources?.references ?? []).filter((reference) => !reference.uploaded);
  const upload = useAction(async (files: File[]) => {
    setNotice("");
    setRefused([]);
    const reference = missing.find((candidate) => candidate.path === answers);
    const stored: string[] = [];
    const failures: Refusal[] = [];
    // One at a time, so that each refusal is told with its own file and the rate limit is spent in order.
    for (const file of files) {
      const form = new FormData();
      form.append("file", file, file.name);
      if (reference) {
        const source = reference.kind === "folder" ? `${reference.path}/${file.name}` : reference.path;
        form.append("source", source);
      }
      try {
        const { data } = await api<Document>("POST", `/v1/agents/${agentId}/documents`, { body: form });
        stored.push(`${data.title} (${data.chunks} ${data.chunks === 1 ? "chunk" : "chunks"})`);
      } catch (error) {
        failures.push({ name: file.name, error });
      }
    }
    setRefused(failures);
    if (stored.length > 0) {
      setNotice(`Uploaded: ${stored.join(", ")}.`);
      setAnswers("");
    }
    await load.run();
  });
  const take = (files: FileList | null | undefined) => {
    const list = [...(files ?? [])];
    if (list.length > 0) void upload.run(list);
  };

  return (
    <section class="documents" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Documents</h2>
      <p class="muted">
        Files the agent answers from: the passages of them that bear on a message reach its prompt, and the
        reply cites them.
      </p>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      <ErrorMessage error={load.error ?? upload.error} />
      {missing.length > 0 ? (
        <div class="warnings missing-knowledge">
          <h3>Knowledge files of the character not uploaded yet</h3>
          <p>
            The imported character names these files and folders; upload each one below and choose it under
            "Answers", so the agent can answer from it.
          </p>
          <ul>
            {missing.map((reference) => (
              <li key={reference.path}>
                <code>{reference.path}</code> <span class="muted">{reference.kind}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {documents === null ? (
        load.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : documents.length === 0 ? (
        <p>This agent has no documents.</p>
      ) : (
        <TableScroll label="Documents of the agent">
          <table>
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Type</th>
                <th scope="col">Size</th>
                <th scope="col">Chunks</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {documents.map((document) => (
                <tr key={document.id} data-document={document.id}>
                  <td>
                    <span class="title">{document.title}</span>
                    {document.source ? (
                      <>
                        {" "}
                        <code class="muted">{document.source}</code>
                      </>
                    ) : null}
                  </td>
                  <td>{TYPE_NAMES[document.contentType] ?? document.contentType}</td>
                  <td>{formatSize(document.sizeBytes)}</td>
                  <td>{document.chunks}</td>
                  <td>{formatTime(document.createdAt)}</td>
                  <td class="actions">
                    <ConfirmButton
                      label="Delete"
                      title="Delete this document?"
                      message={`"${document.title}" and its ${document.chunks} chunks go; no later reply is given its passages. Replies already stored keep their citations.`}
                      confirmLabel="Delete document"
                      onConfirm={async () => {
                        await api("DELETE", `/v1/agents/${agentId}/documents/${document.id}`);
                        setNotice(`Document "${document.title}" deleted.`);
                        await load.run();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <fieldset
        class={`drop upload-documents ${dragging ? "dragging" : ""}`}
        aria-busy={upload.busy}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          take(e.dataTransfer?.files);
        }}
      >
        <legend>Upload documents</legend>
        <Field
          id={`${id}-file`}
          label="Files (choose or drop them here)"
          hint="Text, Markdown, HTML or PDF; at most 10 MiB each."
        >
          <input
            id={`${id}-file`}
            type="file"
            multiple
            accept={ACCEPT}
            disabled={upload.busy}
            aria-describedby={`${id}-file-hint`}
            onChange={(e) => {
              take(e.currentTarget.files);
              e.currentTarget.value = "";
            }}
          />
        </Field>
        {missing.length > 0 ? (
          <Field id={`${id}-answers`} label="Answers">
            <select id={`${id}-answers`} value={answers} onChange={(e) => setAnswers(e.currentTarget.value)}>
              <option value="">No reference of the character</option>
              {missing.map((reference) => (
                <option key={reference.path} value={reference.path}>
                  {reference.path} ({reference.kind})
                </option>
              ))}
            </select>
          </Field>
        ) : null}
        {upload.busy ? <p aria-busy="true">Uploading…</p> : null}
      </fieldset>
      {refused.map((refusal) => (
        <div key={refusal.name} class="refused" data-refused={refusal.name}>
          <strong>{refusal.name}</strong> was not uploaded:
          <ErrorMessage error={refusal.error} />
        </div>
      ))}
    </section>
  );
}
