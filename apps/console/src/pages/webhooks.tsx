import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from "@agentry/sdk";
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
import { useCursorPages } from "./history";

export const EVENT_TYPES = [
  "agent.created",
  "agent.updated",
  "agent.status_changed",
  "agent.deleted",
  "message.completed",
  "message.failed",
];

/** Webhooks: endpoints (the secret shown once), test events, deliveries with their status, redelivery. */
export function WebhooksPage() {
  const [webhooks, setWebhooks] = useState<WebhookEndpoint[] | null>(null);
  const [secret, setSecret] = useState<{ label: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [notice, setNotice] = useState("");
  /** When each endpoint was last sent a test event: its deliveries are watched for a while after. */
  const [tested, setTested] = useState<Record<string, number>>({});
  const [editing, setEditing] = useState<string | null>(null);
  const load = useAction(async () => {
    setWebhooks((await api<WebhookEndpoint[]>("GET", "/v1/webhooks")).data);
  });
  useEffect(() => {
    void load.run();
  }, []);
  const act = useAction(async (run: () => Promise<void>) => {
    // An earlier action's notice must not stand beside this one's error.
    setNotice("");
    await run();
  });

  return (
    <>
      {secret ? (
        <SecretOnce label={secret.label} secret={secret.secret} onDone={() => setSecret(null)} />
      ) : (
        <EndpointForm
          onSaved={(webhook, value) => {
            setSecret({ label: `Signing secret of ${webhook.url}`, secret: value ?? "" });
            void load.run();
          }}
        />
      )}
      <h2>Endpoints</h2>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      <ErrorMessage error={load.error ?? act.error} />
      {webhooks === null ? (
        load.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : webhooks.length === 0 ? (
        <p>No endpoints yet.</p>
      ) : (
        <ul class="webhooks">
          {webhooks.map((webhook) => (
            <li key={webhook.id} class="card">
              <div class="row wrap">
                <code class="grow break">{webhook.url}</code>
                <span class={`badge ${webhook.enabled ? "active" : "inactive"}`}>
                  {webhook.enabled ? "enabled" : "disabled"}
                </span>
              </div>
              <p class="small">
                {webhook.description ? `${webhook.description} · ` : ""}
                Events: {webhook.events.join(", ")}
                {webhook.disabledReason ? ` · ${webhook.disabledReason}` : ""}
              </p>
              <div class="actions">
                <button
                  type="button"
                  onClick={() =>
                    act.run(async () => {
                      await api("POST", `/v1/webhooks/${webhook.id}/test`);
                      setNotice(`Sent a webhook.test event to ${webhook.url}.`);
                      setTested({ ...tested, [webhook.id]: Date.now() });
                      setOpen(webhook.id);
                    })
                  }
                >
                  Send test event
                </button>
                <button
                  type="button"
                  aria-expanded={editing === webhook.id}
                  onClick={() => setEditing(editing === webhook.id ? null : webhook.id)}
                >
                  Edit<span class="visually-hidden"> {webhook.url}</span>
                </button>
                <button
                  type="button"
                  aria-expanded={open === webhook.id}
                  onClick={() => setOpen(open === webhook.id ? null : webhook.id)}
                >
                  Deliveries
                </button>
                <button
                  type="button"
                  onClick={() =>
                    act.run(async () => {
                      await api("PATCH", `/v1/webhooks/${webhook.id}`, {
                        body: { enabled: !webhook.enabled },
                      });
                      await load.run();
                    })
                  }
                >
                  {webhook.enabled ? "Disable" : "Enable"}
                </button>
                <button
                  type="button"
                  onClick={() =>
                    act.run(async () => {
                      const { data } = await api<{ secret: string }>(
                        "POST",
                        `/v1/webhooks/${webhook.id}/rotate-secret`,
                      );
                      setSecret({ label: `New signing secret of ${webhook.url}`, secret: data.secret });
                    })
                  }
                >
                  Rotate secret
                </button>
                <ConfirmButton
                  label="Delete"
                  title="Delete this endpoint?"
                  message={<p>Events stop going to {webhook.url}.</p>}
                  confirmLabel="Delete endpoint"
                  onConfirm={async () => {
                    await api("DELETE", `/v1/webhooks/${webhook.id}`);
                    await load.run();
                  }}
                />
              </div>
              {editing === webhook.id ? (
                <EndpointForm
                  webhook={webhook}
                  onCancel={() => setEditing(null)}
                  onSaved={(saved) => {
                    setEditing(null);
                    setNotice(`Saved the endpoint ${saved.url}.`);
                    void load.run();
                  }}
                />
              ) : null}
              {open === webhook.id ? (
                <Deliveries webhookId={webhook.id} sentAt={tested[webhook.id] ?? 0} />
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** Adds an endpoint (its secret is shown once by the caller), or edits one through PATCH. */
function EndpointForm({
  webhook,
  onSaved,
  onCancel,
}: {
  webhook?: WebhookEndpoint;
  onSaved: (webhook: WebhookEndpoint, secret?: string) => void;
  onCancel?: () => void;
}) {
  const id = useId();
  const [url, setUrl] = useState(webhook?.url ?? "");
  const [description, setDescription] = useState(webhook?.description ?? "");
  const [all, setAll] = useState(webhook ? webhook.events.includes("*") : true);
  const [events, setEvents] = useState<string[]>(webhook?.events.filter((e) => e !== "*") ?? []);
  const save = useAction(async () => {
    const body = {
      url: url.trim(),
      events: all ? ["*"] : events,
      ...(description.trim() || webhook?.description ? { description: description.trim() } : {}),
    };
    if (webhook) {
      const { data } = await api<WebhookEndpoint>("PATCH", `/v1/webhooks/${webhook.id}`, { body });
      onSaved(data);
      return;
    }
    const { data } = await api<WebhookEndpointWithSecret>("POST", "/v1/webhooks", { body });
    setUrl("");
    setDescription("");
    onSaved(data, data.secret);
  });
  return (
    <form
      class="card"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <h2 id={`${id}-title`}>{webhook ? "Edit endpoint" : "Add an endpoint"}</h2>
      <Field label="URL" id={`${id}-url`} hint="An https address reachable from the service.">
        <input
          id={`${id}-url`}
          type="url"
          required
          placeholder="https://example.com/hooks/agentry"
          aria-describedby={`${id}-url-hint`}
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </Field>
      <Field label="Description (optional)" id={`${id}-description`}>
        <input
          id={`${id}-description`}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
      </Field>
      <AllOrSome
        legend="Events"
        allLabel="Every event type (including ones added later)"
        options={EVENT_TYPES}
        all={all}
        chosen={events}
        onAll={setAll}
        onChosen={setEvents}
      />
      <ErrorMessage error={save.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={save.busy}>
          {webhook ? "Save endpoint" : "Add endpoint"}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

/** How long after a test event or a redelivery the log refreshes often, and how often; then while any is pending. */
const WATCH_MS = 60_000;
const WATCH_EVERY_MS = 2_000;
const PENDING_EVERY_MS = 15_000;

function Deliveries({ webhookId, sentAt }: { webhookId: string; sentAt: number }) {
  const pages = useCursorPages<WebhookDelivery>(`/v1/webhooks/${webhookId}/deliveries`, {});
  const [redeliveredAt, setRedeliveredAt] = useState(0);
  const [, setSkipped] = useState(0);
  // Once older pages are shown, a refresh (which starts from the first page) would take them away.
  const olderShown = useRef(false);
  const redeliver = useAction(async (delivery: WebhookDelivery) => {
    await api("POST", `/v1/webhooks/${webhookId}/deliveries/${delivery.id}/redeliver`);
    setRedeliveredAt(Date.now());
    await pages.load.run(true);
  });
  useEffect(() => {
    olderShown.current = false;
    void pages.load.run(true);
  }, [webhookId]);
  // The log follows attempts as they happen: often just after something was sent, then slowly while any is
  // pending, and not at all in a hidden tab.
  const watchedUntil = Math.max(sentAt, redeliveredAt) + WATCH_MS;
  const pending = pages.items.some((delivery) => delivery.status === "pending");
  useEffect(() => {
    const every = Date.now() < watchedUntil ? WATCH_EVERY_MS : pending ? PENDING_EVERY_MS : 0;
    if (every === 0) return;
    const timer = setTimeout(() => {
      if (document.visibilityState === "visible" && !olderShown.current && !pages.load.busy) {
        void pages.load.run(true);
      } else {
        // Renders again, which arms the next check.
        setSkipped((n) => n + 1);
      }
    }, every);
    return () => clearTimeout(timer);
  });
  return (
    <section aria-label="Deliveries">
      <div class="row">
        <h3 class="grow">Deliveries</h3>
        <button type="button" onClick={() => pages.load.run(true)}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={pages.load.error ?? redeliver.error} />
      {pages.items.length === 0 ? (
        <p class="muted">No deliveries yet.</p>
      ) : (
        <TableScroll label="Delivery attempts">
          <table>
            <caption class="visually-hidden">Delivery attempts</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col">When</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {pages.items.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    <code>{delivery.eventType}</code>
                  </td>
                  <td>{delivery.attempt}</td>
                  <td>
                    <span class={`badge ${delivery.status}`}>{delivery.status}</span>
                  </td>
                  <td class="small">
                    {delivery.responseStatus ?? delivery.error ?? "—"}
                    {delivery.durationMs !== null ? ` · ${delivery.durationMs} ms` : ""}
                  </td>
                  <td class="small">{formatTime(delivery.createdAt)}</td>
                  <td>
                    <button type="button" disabled={redeliver.busy} onClick={() => redeliver.run(delivery)}>
                      Redeliver
                      <span class="visually-hidden">
                        {" "}
                        {delivery.eventType} attempt {delivery.attempt}
                      </span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {pages.hasMore ? (
        <button
          type="button"
          onClick={() => {
            olderShown.current = true;
            void pages.load.run(false);
          }}
        >
          Older deliveries
        </button>
      ) : null}
    </section>
  );
}
