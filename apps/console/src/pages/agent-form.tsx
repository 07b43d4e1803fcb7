import type { Agent, AgentStatus, FieldIssue } from "@agentry/sdk";
import { useEffect, useId, useState } from "preact/hooks";
import { type ProviderChoices, providerChoices } from "../agents-api";
import { api } from "../api";
import { navigate } from "../router";
import { checkRequest } from "../schema-check";
import { ErrorMessage, Field, Link, useAction, Warnings } from "../widgets/common";
import { ListEditor } from "../widgets/list-editor";
import { type Entry, entriesOf, RecordEditor, recordOf } from "../widgets/record-editor";
import { ApprovalsPanel } from "./approvals";
import { DocumentsPanel } from "./documents";
import { PlatformClients } from "./platform-clients";
import { SchedulesPanel } from "./schedules";

interface Draft {
  name: string;
  bio: string[];
  knowledge: string[];
  goals: string[];
  personality: Entry[];
  clients: string;
  settings: string;
  plugins: string;
  modelProvider: string;
  model: string;
  status: AgentStatus;
}

const EMPTY: Draft = {
  name: "",
  bio: [],
  knowledge: [],
  goals: [],
  personality: [],
  clients: "[]",
  settings: "{}",
  plugins: "[]",
  modelProvider: "",
  model: "",
  status: "active",
};

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

function draftOf(agent: Agent): Draft {
  return {
    name: agent.name,
    bio: agent.bio,
    knowledge: agent.knowledge,
    goals: agent.goals,
    personality: entriesOf(agent.personality),
    clients: pretty(agent.clients),
    settings: pretty(agent.settings),
    plugins: pretty(agent.plugins),
    modelProvider: agent.modelProvider ?? "",
    model: agent.model ?? "",
    status: agent.status,
  };
}

const JSON_FIELDS = ["settings", "clients", "plugins"] as const;

/** The request body of a draft; on edit, only what changed. A JSON field that does not parse is named. */
export function bodyOf(draft: Draft, original: Draft | null): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: draft.name,
    bio: draft.bio.filter((item) => item.trim() !== ""),
    knowledge: draft.knowledge.filter((item) => item.trim() !== ""),
    goals: draft.goals.filter((item) => item.trim() !== ""),
    personality: recordOf(draft.personality, "Personality"),
  };
  for (const field of JSON_FIELDS) {
    try {
      body[field] = JSON.parse(draft[field]) as unknown;
    } catch {
      throw new Error(`${field} is not valid JSON.`);
    }
  }
  body.modelProvider = draft.modelProvider || null;
  body.model = draft.model.trim() || null;
  if (original === null) {
    if (body.modelProvider === null) delete body.modelProvider;
    if (body.model === null) delete body.model;
    return body;
  }
  body.status = draft.status;
  const before = bodyOf({ ...original }, null);
  before.modelProvider = original.modelProvider || null;
  before.model = original.model.trim() || null;
  before.status = original.status;
  for (const key of Object.keys(body)) {
    if (JSON.stringify(body[key]) === JSON.stringify(before[key])) delete body[key];
  }
  return body;
}

/** Creates an agent, or edits every field of one. */
export function AgentForm({ agentId }: { agentId?: string }) {
  const id = useId();
  const [draft, setDraft] = useState<Draft | null>(agentId ? null : EMPTY);
  const [original, setOriginal] = useState<Draft | null>(null);
  // The agent as last read or saved, for the platform clients panel.
  const [agent, setAgent] = useState<Agent | null>(null);
  const [choices, setChoices] = useState<ProviderChoices>({ providers: [], models: {} });
  const [saved, setSaved] = useState("");
  // A write naming a provider not configured here is kept, with a warning saying what to set.
  const [warnings, setWarnings] = useState<FieldIssue[]>([]);
  const load = useAction(async () => {
    if (!agentId) return;
    const { data } = await api<Agent>("GET", `/v1/agents/${agentId}`);
    setDraft(draftOf(data));
    setOriginal(draftOf(data));
    setAgent(data);
  });
  useEffect(() => {
    void load.run();
    providerChoices().then(setChoices, () => undefined);
  }, [agentId]);

  const save = useAction(async () => {
    if (!draft) return;
    // A notice of an earlier save must not stand beside this one's error.
    setSaved("");
    const body = bodyOf(draft, original);
    if (agentId) {
      if (Object.keys(body).length === 0) {
        setSaved("Nothing changed.");
        return;
      }
      await checkRequest("UpdateAgentRequest", body);
      const { data, warnings: written } = await api<Agent>("PATCH", `/v1/agents/${agentId}`, { body });
      setWarnings(written ?? []);
      setDraft(draftOf(data));
      setOriginal(draftOf(data));
      setAgent(data);
      setSaved(`Saved ${data.name}.`);
    } else {
      await checkRequest("CreateAgentRequest", body);
      const { data, warnings: written } = await api<Agent>("POST", "/v1/agents", { body });
      setWarnings(written ?? []);
      navigate(`/agents/${data.id}/edit`, { replace: true });
      setSaved(`Created ${data.name}.`);
    }
  });

  if (!draft) {
    return load.error ? <ErrorMessage error={load.error} /> : <p aria-busy="true">Loading…</p>;
  }
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value });
  const models = choices.models[draft.modelProvider] ?? [];
  return (
    <>
      <form
        class="agent-form"
        onSubmit={(event) => {
          event.preventDefault();
          void save.run();
        }}
      >
        <p>
          <Link to="/agents">← All agents</Link>
        </p>
        <Field label="Name" id={`${id}-name`}>
          <input
            id={`${id}-name`}
            required
            maxLength={200}
            value={draft.name}
            onInput={(e) => set("name", e.currentTarget.value)}
          />
        </Field>
        <div class="two">
          <Field label="Model provider" id={`${id}-provider`} hint="Unset: the server's default provider.">
            <select
              id={`${id}-provider`}
              aria-describedby={`${id}-provider-hint`}
              value={draft.modelProvider}
              onChange={(e) => set("modelProvider", e.currentTarget.value)}
            >
              <option value="">Server default</option>
              {choices.providers.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Model" id={`${id}-model`} hint="Unset: the provider's default model.">
            <input
              id={`${id}-model`}
              list={`${id}-models`}
              aria-describedby={`${id}-model-hint`}
              value={draft.model}
              onInput={(e) => set("model", e.currentTarget.value)}
            />
            <datalist id={`${id}-models`}>
              {models.map((model) => (
                <option key={model} value={model} />
              ))}
            </datalist>
          </Field>
        </div>
        {agentId ? (
          <Field label="Status" id={`${id}-status`}>
            <select
              id={`${id}-status`}
              value={draft.status}
              onChange={(e) => set("status", e.currentTarget.value as AgentStatus)}
            >
              <option value="active">active</option>
              <option value="inactive">inactive</option>
              {draft.status === "error" ? <option value="error">error</option> : null}
            </select>
          </Field>
        ) : null}
        <ListEditor label="Bio" items={draft.bio} onChange={(items) => set("bio", items)} />
        <ListEditor label="Knowledge" items={draft.knowledge} onChange={(items) => set("knowledge", items)} />
        <ListEditor label="Goals" items={draft.goals} onChange={(items) => set("goals", items)} />
        <RecordEditor
          label="Personality"
          entries={draft.personality}
          onChange={(entries) => set("personality", entries)}
        />
        {JSON_FIELDS.map((field) => (
          <Field
            key={field}
            label={`${field[0]!.toUpperCase()}${field.slice(1)} (JSON)`}
            id={`${id}-${field}`}
          >
            <textarea
              id={`${id}-${field}`}
              class="mono"
              rows={field === "settings" ? 6 : 3}
              value={draft[field]}
              spellcheck={false}
              onInput={(e) => set(field, e.currentTarget.value)}
            />
          </Field>
        ))}
        <ErrorMessage error={save.error} />
        <p aria-live="polite" class="notice">
          {saved}
        </p>
        {warnings.length > 0 ? <Warnings title="Warnings of this save" warnings={warnings} /> : null}
        <button type="submit" class="primary" disabled={save.busy}>
          {agentId ? "Save changes" : "Create agent"}
        </button>
      </form>
      {agentId && agent ? (
        <PlatformClients
          agent={agent}
          onAgent={(changed) => {
            // A client added from the panel is in the form's clients too; the rest of the draft is kept.
            setAgent(changed);
            setDraft({ ...draft, clients: pretty(changed.clients) });
            if (original) setOriginal({ ...original, clients: pretty(changed.clients) });
          }}
        />
      ) : null}
      {agentId && agent ? <ApprovalsPanel agentId={agentId} /> : null}
      {agentId && agent ? <SchedulesPanel agentId={agentId} /> : null}
      {agentId && agent ? <DocumentsPanel agentId={agentId} /> : null}
    </>
  );
}
