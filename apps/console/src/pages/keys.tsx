import type { ApiKey, ApiKeyCreated } from "@agentry/sdk";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { api } from "../api";
import {
  AllOrSome,
  ConfirmButton,
  ErrorMessage,
  Field,
  formatTime,
  SecretOnce,
  TableScroll,
  useAction,
} from "../widgets/common";

export const SCOPES = [
  "agents:read",
  "agents:write",
  "agents:delete",
  "messages:send",
  "keys:manage",
  "history:read",
  "history:delete",
  "usage:read",
  "webhooks:manage",
  "plugins:manage",
  "members:read",
  "members:write",
  "budgets:read",
  "budgets:write",
] as const;

/** Account settings → API keys: list, create (the key shown once), revoke. */
export function KeysPage() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [created, setCreated] = useState<{ key: string; name: string } | null>(null);
  const [notice, setNotice] = useState("");
  // Where focus goes when what held it leaves the page (the shown key, a revoked key's row): the list's heading.
  const listHeading = useRef<HTMLHeadingElement>(null);
  const [refocus, setRefocus] = useState(0);
  useEffect(() => {
    if (refocus > 0) listHeading.current?.focus();
  }, [refocus]);
  const load = useAction(async () => {
    setKeys((await api<ApiKey[]>("GET", "/v1/api-keys")).data);
  });
  useEffect(() => {
    void load.run();
  }, []);

  return (
    <>
      <p class="muted">Keys let programs call the API. A key acts with the scopes it was given.</p>
      {created ? (
        <SecretOnce
          label={`New key ${created.name || ""}`.trim()}
          secret={created.key}
          onDone={() => {
            setNotice(`Key ${created.name || ""} is in the list below.`.replace("  ", " "));
            setCreated(null);
            setRefocus((n) => n + 1);
          }}
        />
      ) : (
        <CreateKey
          onCreated={(key, name) => {
            setNotice("");
            setCreated({ key, name });
            void load.run();
          }}
        />
      )}
      <h2 ref={listHeading} tabIndex={-1}>
        Keys
      </h2>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      <ErrorMessage error={load.error} />
      {keys === null ? (
        <p aria-busy="true">Loading…</p>
      ) : keys.length === 0 ? (
        <p>No keys yet.</p>
      ) : (
        <TableScroll label="API keys">
          <table>
            <caption class="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name || <span class="muted">unnamed</span>}</td>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td class="scopes">{key.fullAccess ? "full access" : key.scopes.join(", ")}</td>
                  <td>{formatTime(key.createdAt)}</td>
                  <td>{key.lastUsedAt ? formatTime(key.lastUsedAt) : "never"}</td>
                  <td>{key.expiresAt ? formatTime(key.expiresAt) : "never"}</td>
                  <td>
                    <ConfirmButton
                      label={
                        <>
                          Revoke<span class="visually-hidden"> key {key.name || key.prefix}</span>
                        </>
                      }
                      title="Revoke this key?"
                      message={
                        <p>
                          Programs using <code>{key.prefix}…</code> ({key.name || "unnamed"}) stop working at
                          once. This cannot be undone.
                        </p>
                      }
                      confirmLabel="Revoke key"
                      onConfirm={async () => {
                        await api("DELETE", `/v1/api-keys/${key.id}`);
                        setNotice(`Revoked key ${key.name || key.prefix}.`);
                        await load.run();
                        setRefocus((n) => n + 1);
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: string, name: string) => void }) {
  const id = useId();
  const [name, setName] = useState("");
  const [full, setFull] = useState(true);
  const [scopes, setScopes] = useState<string[]>(["agents:read"]);
  const [expires, setExpires] = useState("");
  const create = useAction(async () => {
    const body: Record<string, unknown> = {};
    if (name.trim()) body.name = name.trim();
    if (!full) body.scopes = scopes;
    if (expires) body.expiresAt = new Date(`${expires}T23:59:59`).toISOString();
    const { data } = await api<ApiKeyCreated>("POST", "/v1/api-keys", { body });
    setName("");
    setExpires("");
    onCreated(data.key, data.name);
  });
  return (
    <form
      class="card"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id={`${id}-title`}>Create a key</h2>
      <Field label="Name" id={`${id}-name`}>
        <input
          id={`${id}-name`}
          value={name}
          maxLength={200}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </Field>
      <AllOrSome
        legend="Scopes"
        allLabel="Full access (every scope, including ones added later)"
        options={SCOPES}
        all={full}
        chosen={scopes}
        onAll={setFull}
        onChosen={setScopes}
      />
      <Field
        label="Expires on (optional)"
        id={`${id}-expires`}
        hint="The key stops working at the end of this day."
      >
        <input
          id={`${id}-expires`}
          type="date"
          value={expires}
          aria-describedby={`${id}-expires-hint`}
          onInput={(e) => setExpires(e.currentTarget.value)}
        />
      </Field>
      <ErrorMessage error={create.error} />
      <button type="submit" class="primary" disabled={create.busy || (!full && scopes.length === 0)}>
        Create key
      </button>
    </form>
  );
}
