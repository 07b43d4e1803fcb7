import type { Agent, AgentClient, ClientStatus, Secret } from "@agentry/sdk";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { ErrorMessage, formatTime, useAction } from "../widgets/common";

/** A platform the connectors run: what a person calls it and the agent secrets it reads. */
interface Platform {
  label: string;
  secrets: { name: string; label: string; hint: string }[];
}

export const PLATFORMS: Record<string, Platform> = {
  telegram: {
    label: "Telegram",
    secrets: [{ name: "TELEGRAM_BOT_TOKEN", label: "Bot token", hint: "From @BotFather: 123456:ABC-…" }],
  },
  discord: {
    label: "Discord",
    secrets: [
      {
        name: "DISCORD_BOT_TOKEN",
        label: "Bot token",
        hint: "From the Discord Developer Portal, the application's Bot page.",
      },
    ],
  },
  slack: {
    label: "Slack",
    secrets: [
      { name: "SLACK_BOT_TOKEN", label: "Bot token", hint: "The app's Bot User OAuth Token: xoxb-…" },
      {
        name: "SLACK_SIGNING_SECRET",
        label: "Signing secret",
        hint: "The app's Basic Information page, App Credentials.",
      },
    ],
  },
};

const STATE_WORDS: Record<ClientStatus["state"], string> = {
  connected: "Connected",
  connecting: "Connecting…",
  stopped: "Stopped",
  failed: "Failed",
  inert: "Not run by this server",
};

/** How often the panel asks again while a client is on its way (connecting, or a token was just saved). */
const REFRESH_MS = 1_000;
/** How long after a change the panel keeps asking, for the connectors to take it up. */
const SETTLE_MS = 20_000;

const typeOf = (client: AgentClient) => (typeof client === "string" ? client : client.type);
const platformName = (type: string) => PLATFORMS[type]?.label ?? type;

/**
 * The address a platform must call for this agent, when it pushes events: Slack always, Telegram in webhook mode.
 * It is on the public origin the server builds the agent's `apiEndpoint` from.
 */
export function pushUrlOf(agent: Agent, type: string): string | null {
  const client = agent.clients.find((c) => typeOf(c) === type);
  const pushed =
    type === "slack" ||
    (type === "telegram" && typeof client === "object" && client !== null && client.mode === "webhook");
  if (!pushed) return null;
  return `${new URL(agent.apiEndpoint).origin}/v1/connectors/${type}/${agent.id}`;
}

/** What a person does about a client's state, in words; null when nothing is to be done. */
export function adviceOf(status: ClientStatus, agent: Agent, missing: string[]): string | null {
  const name = platformName(status.type);
  if (status.state === "inert") {
    return `This server runs no ${name} connector: the client is kept, but nothing answers on ${name}.`;
  }
  if (status.lastError?.code === "CLIENT_AUTH_FAILED") {
    return `${status.lastError.message.replace(/\.$/, "")}. Paste a valid token below: the client starts again once it is saved.`;
  }
  if (status.state === "failed" || status.lastError) {
    return `${status.lastError?.message ?? `The ${name} client failed.`} Check the token below and the server's access to ${name}.`;
  }
  if (status.state === "stopped") {
    if (missing.length > 0) return `Paste the ${missing.join(" and ")} below to start it.`;
    if (agent.status === "inactive") return "The agent is inactive: activate it to start the client.";
  }
  return null;
}

/**
 * The agent's platform clients: each one's state (asked again while one is connecting), its last error in words,
 * fields to paste the tokens it needs (stored as agent secrets, never shown again: only whether each is set), the
 * address a platform that pushes events must call, and a way to add a client.
 */
export function PlatformClients({ agent, onAgent }: { agent: Agent; onAgent: (agent: Agent) => void }) {
  const id = useId();
  const [clients, setClients] = useState<ClientStatus[] | null>(null);
  const [secrets, setSecrets] = useState<Set<string>>(new Set());
  const [settleUntil, setSettleUntil] = useState(0);
  const [notice, setNotice] = useState("");
  const [adding, setAdding] = useState("");
  const load = useAction(async () => {
    const [listed, stored] = await Promise.all([
      api<ClientStatus[]>("GET", `/v1/agents/${agent.id}/clients`),
      api<Secret[]>("GET", `/v1/agents/${agent.id}/secrets`),
    ]);
    setClients(listed.data);
    setSecrets(new Set(stored.data.map((secret) => secret.name)));
  });
  const loadRef = useRef(load.run);
  loadRef.current = load.run;
  useEffect(() => {
    void load.run();
  }, [agent.id, agent.updatedAt]);

  const waiting =
    clients?.some((client) => client.state === "connecting") === true || Date.now() < settleUntil;
  useEffect(() => {
    if (!waiting) return;
    const timer = setTimeout(() => void loadRef.current(), REFRESH_MS);
    return () => clearTimeout(timer);
  }, [waiting, clients]);

  const add = useAction(async () => {
    if (!adding) return;
    setNotice("");
    const { data } = await api<Agent>("PATCH", `/v1/agents/${agent.id}`, {
      body: { clients: [...agent.clients, adding] },
    });
    setNotice(`Added the ${platformName(adding)} client.`);
    setAdding("");
    setSettleUntil(Date.now() + SETTLE_MS);
    onAgent(data);
  });

  const listed = new Set(agent.clients.map(typeOf));
  const addable = Object.keys(PLATFORMS).filter((type) => !listed.has(type));
  return (
    <section class="platform-clients" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Platform clients</h2>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      <ErrorMessage error={load.error ?? add.error} />
      {clients === null ? (
        load.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : clients.length === 0 ? (
        <p>This agent is on no platform. Add a client to answer people on Telegram, Discord or Slack.</p>
      ) : (
        clients.map((client) => (
          <ClientCard
            key={client.type}
            agent={agent}
            client={client}
            secrets={secrets}
            onSaved={(words) => {
              setNotice(words);
              setSettleUntil(Date.now() + SETTLE_MS);
              void load.run();
            }}
          />
        ))
      )}
      {addable.length > 0 ? (
        <form
          class="add-client"
          onSubmit={(event) => {
            event.preventDefault();
            void add.run();
          }}
        >
          <label for={`${id}-add`}>Add a client</label>
          <select id={`${id}-add`} value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
            <option value="">Choose a platform</option>
            {addable.map((type) => (
              <option key={type} value={type}>
                {platformName(type)}
              </option>
            ))}
          </select>
          <button type="submit" disabled={!adding || add.busy}>
            Add client
          </button>
        </form>
      ) : null}
    </section>
  );
}

function ClientCard({
  agent,
  client,
  secrets,
  onSaved,
}: {
  agent: Agent;
  client: ClientStatus;
  secrets: Set<string>;
  onSaved: (notice: string) => void;
}) {
  const id = useId();
  const platform = PLATFORMS[client.type];
  const [values, setValues] = useState<Record<string, string>>({});
  const name = platformName(client.type);
  const missing = (platform?.secrets ?? []).filter((s) => !secrets.has(s.name)).map((s) => s.name);
  const advice = adviceOf(client, agent, missing);
  const pushUrl = pushUrlOf(agent, client.type);
  const save = useAction(async () => {
    const given = Object.entries(values).filter(([, value]) => value.trim() !== "");
    if (given.length === 0) throw new Error("Paste a token to save.");
    for (const [secret, value] of given) {
      await api("PUT", `/v1/agents/${agent.id}/secrets/${secret}`, { body: { value: value.trim() } });
    }
    // The value leaves the page once stored: the API never shows it again, and neither does the console.
    setValues({});
    onSaved(`Saved ${given.map(([secret]) => secret).join(" and ")} of ${name}.`);
  });
  return (
    <article class="client" aria-labelledby={`${id}-name`}>
      <h3 id={`${id}-name`}>
        {name}{" "}
        <span class={`badge ${client.state}`} aria-live="polite">
          {STATE_WORDS[client.state]}
        </span>
      </h3>
      {client.connectedAt || client.lastEventAt ? (
        <p class="small muted">
          {[
            client.connectedAt ? `Connected since ${formatTime(client.connectedAt)}` : "",
            client.lastEventAt ? `last event ${formatTime(client.lastEventAt)}` : "no event yet",
          ]
            .filter(Boolean)
            .join(" · ")}
        </p>
      ) : null}
      {advice ? (
        <p class={client.state === "failed" || client.lastError ? "error" : "advice"} role="status">
          {advice}
        </p>
      ) : null}
      {pushUrl ? (
        <p class="small">
          {name} must send its events to <code class="mono">{pushUrl}</code>
          {client.type === "slack"
            ? " (the app's Event Subscriptions, Request URL)."
            : " (registered with Telegram by the server)."}
        </p>
      ) : null}
      {platform ? (
        <form
          class="tokens"
          onSubmit={(event) => {
            event.preventDefault();
            void save.run();
          }}
        >
          {platform.secrets.map((secret) => (
            <div class="field" key={secret.name}>
              <label for={`${id}-${secret.name}`}>
                {name} {secret.label.toLowerCase()} ({secrets.has(secret.name) ? "set" : "not set"})
              </label>
              <input
                id={`${id}-${secret.name}`}
                type="password"
                autocomplete="off"
                spellcheck={false}
                aria-describedby={`${id}-${secret.name}-hint`}
                placeholder={secrets.has(secret.name) ? "Paste a new one to replace it" : ""}
                value={values[secret.name] ?? ""}
                onInput={(e) => setValues({ ...values, [secret.name]: e.currentTarget.value })}
              />
              <small class="muted" id={`${id}-${secret.name}-hint`}>
                {secret.name}: {secret.hint}
              </small>
            </div>
          ))}
          <ErrorMessage error={save.error} />
          <button type="submit" disabled={save.busy}>
            Save {platform.secrets.length > 1 ? "tokens" : "token"}
            <span class="visually-hidden"> of {name}</span>
          </button>
        </form>
      ) : null}
    </article>
  );
}
