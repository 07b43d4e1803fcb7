import type { Agent, AgentDraft, AgentStatus, FieldIssue, Pagination } from "@agentry/sdk";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { api, withQuery } from "../api";
import { currentRoute, navigate } from "../router";
import {
  ConfirmButton,
  ErrorMessage,
  formatTime,
  Link,
  TableScroll,
  useAction,
  Warnings,
} from "../widgets/common";

const PAGE_SIZE = 10;
const STATUSES = ["active", "inactive", "error"] as const;
const SORTS = ["createdAt:desc", "createdAt:asc", "name:asc", "name:desc", "status:asc"] as const;
const DEFAULT_SORT = SORTS[0];

/** The list's filter, sort and page as the address gives them (`?status=&sort=&page=`), unknown values ignored. */
export function listStateOf(query: URLSearchParams): {
  status: "" | AgentStatus;
  sort: string;
  page: number;
} {
  const status = STATUSES.find((s) => s === query.get("status")) ?? "";
  const sort = SORTS.find((s) => s === query.get("sort")) ?? DEFAULT_SORT;
  const page = Number(query.get("page"));
  return { status, sort, page: Number.isInteger(page) && page >= 1 ? page : 1 };
}

/** Agents: the list with the API's status filter, sort and pages; status toggle, export, delete; import. */
export function AgentsPage() {
  const id = useId();
  const [initial] = useState(() => listStateOf(currentRoute().query));
  const [status, setStatus] = useState<"" | AgentStatus>(initial.status);
  const [sort, setSort] = useState(initial.sort);
  const [page, setPage] = useState(initial.page);
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [pagination, setPagination] = useState<Pagination | null>(null);
  const [notice, setNotice] = useState("");
  const [imported, setImported] = useState<{ agent: Agent; warnings: FieldIssue[] } | null>(null);
  const load = useAction(async () => {
    const [sortBy, order] = sort.split(":");
    const result = await api<Agent[], Pagination>("GET", "/v1/agents", {
      query: { page, limit: PAGE_SIZE, status, sortBy, order },
    });
    setAgents(result.data);
    setPagination(result.pagination ?? null);
  });
  useEffect(() => {
    void load.run();
    // Kept in the address, so that a reload, the back button or a shared link shows the same list.
    const query = {
      status,
      sort: sort === DEFAULT_SORT ? undefined : sort,
      page: page > 1 ? page : undefined,
    };
    if (currentRoute().path === "/agents") navigate(withQuery("/agents", query), { replace: true });
  }, [status, sort, page]);

  const toggle = useAction(async (agent: Agent) => {
    setNotice("");
    const next = agent.status === "inactive" ? "active" : "inactive";
    await api("PATCH", `/v1/agents/${agent.id}`, { body: { status: next } });
    setNotice(`${agent.name} is now ${next}.`);
    await load.run();
  });

  return (
    <>
      <div class="toolbar">
        <Link to="/agents/new" class="button primary">
          New agent
        </Link>
        <ImportCharacter
          onImported={(agent, warnings) => {
            setNotice(`Imported ${agent.name}.`);
            setImported({ agent, warnings });
            void load.run();
          }}
        />
      </div>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      {imported && imported.warnings.length > 0 ? (
        <Warnings title={`Warnings of the import of ${imported.agent.name}`} warnings={imported.warnings} />
      ) : null}
      <div class="filters">
        <label for={`${id}-status`}>Status</label>
        <select
          id={`${id}-status`}
          value={status}
          onChange={(e) => {
            setStatus(e.currentTarget.value as AgentStatus | "");
            setPage(1);
          }}
        >
          <option value="">Any</option>
          <option value="active">Active</option>
          <option value="inactive">Inactive</option>
          <option value="error">Error</option>
        </select>
        <label for={`${id}-sort`}>Sort by</label>
        <select
          id={`${id}-sort`}
          value={sort}
          onChange={(e) => {
            setSort(e.currentTarget.value);
            setPage(1);
          }}
        >
          <option value="createdAt:desc">Newest first</option>
          <option value="createdAt:asc">Oldest first</option>
          <option value="name:asc">Name A–Z</option>
          <option value="name:desc">Name Z–A</option>
          <option value="status:asc">Status</option>
        </select>
      </div>
      <ErrorMessage error={load.error ?? toggle.error} />
      {agents === null ? (
        load.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : agents.length === 0 ? (
        <p>No agents{status ? ` with status ${status}` : ""} yet.</p>
      ) : (
        <TableScroll label="Agents">
          <table class="stack">
            <caption class="visually-hidden">Agents</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Model</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {agents.map((agent) => (
                <tr key={agent.id}>
                  <td>
                    <Link to={`/agents/${agent.id}/edit`}>{agent.name}</Link>
                    <div class="muted small mono">{agent.id}</div>
                  </td>
                  <td>
                    <span class={`badge ${agent.status}`}>{agent.status}</span>
                    {agent.statusReason ? <div class="small">{agent.statusReason.message}</div> : null}
                  </td>
                  <td class="small">
                    {agent.modelProvider ?? "default"}
                    {agent.model ? ` / ${agent.model}` : ""}
                  </td>
                  <td class="small">{formatTime(agent.createdAt)}</td>
                  <td>
                    <div class="actions">
                      <button type="button" disabled={toggle.busy} onClick={() => toggle.run(agent)}>
                        {agent.status === "inactive" ? "Activate" : "Deactivate"}
                        <span class="visually-hidden"> {agent.name}</span>
                      </button>
                      <button type="button" onClick={() => navigate(`/chat?agent=${agent.id}`)}>
                        Chat<span class="visually-hidden"> with {agent.name}</span>
                      </button>
                      <a class="button" href={`/v1/agents/${agent.id}/character`} download>
                        Export<span class="visually-hidden"> {agent.name}</span>
                      </a>
                      <ConfirmButton
                        label={
                          <>
                            Delete<span class="visually-hidden"> {agent.name}</span>
                          </>
                        }
                        title={`Delete ${agent.name}?`}
                        message={
                          <p>Its history, usage and logs are deleted with it. This cannot be undone.</p>
                        }
                        confirmLabel="Delete agent"
                        onConfirm={async () => {
                          await api("DELETE", `/v1/agents/${agent.id}`);
                          setNotice(`Deleted ${agent.name}.`);
                          await load.run();
                        }}
                      />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {pagination && (pagination.totalPages ?? 1) > 1 ? (
        <nav class="pages" aria-label="Pages of agents">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous page
          </button>
          <span>
            Page {pagination.page} of {pagination.totalPages} ({pagination.total} agents)
          </span>
          <button type="button" disabled={!pagination.hasMore} onClick={() => setPage(page + 1)}>
            Next page
          </button>
        </nav>
      ) : pagination ? (
        <p class="muted small">{pagination.total} agent(s)</p>
      ) : null}
    </>
  );
}

/** A plugin of an agent as one line: its name, and whether it acts. */
function pluginLabel(plugin: unknown): string {
  if (typeof plugin === "string") return plugin;
  const { name, enabled } = plugin as { name?: unknown; enabled?: unknown };
  return `${String(name)}${enabled === false ? " (disabled)" : ""}`;
}

/**
 * Imports an elizaOS character file, chosen or dropped, through `POST /v1/agents/import`: the file is first checked
 * with `dryRun=true` and the agent it would make is shown with the warnings; it is created only when confirmed.
 * "Use this server's default model" imports it with `useDefaultModel=true`, for files naming a provider that is
 * not configured here.
 */
function ImportCharacter({ onImported }: { onImported: (agent: Agent, warnings: FieldIssue[]) => void }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [dragging, setDragging] = useState(false);
  const [useDefaultModel, setUseDefaultModel] = useState(false);
  const [chosen, setChosen] = useState<{ name: string; character: unknown } | null>(null);
  const [preview, setPreview] = useState<{ agent: AgentDraft; warnings: FieldIssue[] } | null>(null);
  const check = useAction(async (file: { name: string; character: unknown }, defaultModel: boolean) => {
    setPreview(null);
    const result = await api<AgentDraft>("POST", "/v1/agents/import", {
      body: file.character,
      query: { dryRun: true, useDefaultModel: defaultModel || undefined },
    });
    setPreview({ agent: result.data, warnings: result.warnings ?? [] });
  });
  const read = useAction(async (file: File) => {
    let character: unknown;
    try {
      character = JSON.parse(await file.text());
    } catch {
      throw new Error(`${file.name} is not a JSON file.`);
    }
    const next = { name: file.name, character };
    setChosen(next);
    await check.run(next, useDefaultModel);
  });
  const create = useAction(async () => {
    if (!chosen) return;
    const result = await api<Agent>("POST", "/v1/agents/import", {
      body: chosen.character,
      query: { useDefaultModel: useDefaultModel || undefined },
    });
    setChosen(null);
    setPreview(null);
    onImported(result.data, result.warnings ?? []);
  });
  const take = (files: FileList | null | undefined) => {
    const file = files?.[0];
    if (file) void read.run(file);
  };
  const busy = read.busy || check.busy || create.busy;
  return (
    <fieldset
      class={`drop ${dragging ? "dragging" : ""}`}
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
      <legend>Import an elizaOS character</legend>
      <label for={`${id}-file`}>Character file (choose or drop one here)</label>
      <input
        id={`${id}-file`}
        ref={input}
        type="file"
        accept=".json,application/json"
        onChange={(e) => {
          take(e.currentTarget.files);
          e.currentTarget.value = "";
        }}
      />
      <label>
        <input
          type="checkbox"
          checked={useDefaultModel}
          onChange={(e) => {
            const checked = e.currentTarget.checked;
            setUseDefaultModel(checked);
            if (chosen) void check.run(chosen, checked);
          }}
        />{" "}
        Use this server's default model
      </label>
      {busy ? <span aria-live="polite">{create.busy ? "Importing…" : "Checking…"}</span> : null}
      <ErrorMessage error={read.error ?? check.error ?? create.error} />
      {chosen && preview ? (
        <section class="preview" aria-label={`Preview of ${chosen.name}`}>
          <h3>Preview: the agent {chosen.name} would create</h3>
          <dl>
            <dt>Name</dt>
            <dd>{preview.agent.name}</dd>
            <dt>Bio</dt>
            <dd>{preview.agent.bio.join(" ") || "none"}</dd>
            <dt>Model</dt>
            <dd>
              {preview.agent.modelProvider ?? "this server's default provider"} /{" "}
              {preview.agent.model ?? "its default model"}
            </dd>
            <dt>Plugins</dt>
            <dd>{preview.agent.plugins.map(pluginLabel).join(", ") || "none"}</dd>
          </dl>
          {preview.warnings.length > 0 ? (
            <Warnings title="Warnings of this file" warnings={preview.warnings} />
          ) : (
            <p>No warnings.</p>
          )}
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={() => void create.run()}>
              Create agent
            </button>
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                setChosen(null);
                setPreview(null);
              }}
            >
              Cancel
            </button>
          </div>
        </section>
      ) : null}
    </fieldset>
  );
}
