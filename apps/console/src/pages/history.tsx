import type { Agent, Conversation, HistoryMessage } from "@agentry/sdk";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { allAgents } from "../agents-api";
import { ApiError, api, withQuery } from "../api";
import { currentRoute, navigate } from "../router";
import { ConfirmButton, ErrorMessage, formatTime, useAction } from "../widgets/common";
import { Markdown } from "../widgets/markdown";

const PAGE = 20;

/**
 * Follows cursor pages (`before=<last id>`) of a history list: `more` loads the next page, and it is called
 * again when the sentinel element scrolls into view (infinite scroll), with a button for keyboards.
 */
export function useCursorPages<T extends { id: string }>(path: string | null, query: Record<string, string>) {
  const [items, setItems] = useState<T[]>([]);
  const [hasMore, setHasMore] = useState(false);
  // Each reset starts a new generation; an answer of an older one (another agent's list, say) is dropped.
  const generation = useRef(0);
  const loadingMore = useRef(false);
  const load = useAction(async (reset: boolean) => {
    if (!path || (!reset && loadingMore.current)) return;
    if (reset) generation.current += 1;
    const mine = generation.current;
    loadingMore.current = !reset;
    try {
      const before = reset ? undefined : items.at(-1)?.id;
      const { data, pagination } = await api<T[]>("GET", path, { query: { ...query, limit: PAGE, before } });
      if (mine !== generation.current) return;
      setItems(reset ? data : [...items, ...data]);
      setHasMore(pagination?.hasMore ?? false);
    } finally {
      if (!reset) loadingMore.current = false;
    }
  });
  return { items, setItems, hasMore, load };
}

function Sentinel({ onVisible, disabled }: { onVisible: () => void; disabled: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (disabled || !ref.current || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) onVisible();
    });
    observer.observe(ref.current);
    return () => observer.disconnect();
  });
  return <div ref={ref} class="sentinel" aria-hidden="true" />;
}

/** History: an agent's conversations, their messages (infinite scroll), deletion; a user's export and erasure. */
export function HistoryPage() {
  const id = useId();
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [agentId, setAgentId] = useState("");
  const [selected, setSelected] = useState<Conversation | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    allAgents().then((list) => {
      setAgents(list);
      // The agent the address names (`?agent=`), else the first.
      const named = currentRoute().query.get("agent");
      const chosen = list.find((agent) => agent.id === named) ?? list[0];
      if (chosen) setAgentId(chosen.id);
    }, setError);
  }, []);

  const conversations = useCursorPages<Conversation>(
    agentId ? `/v1/agents/${agentId}/conversations` : null,
    {},
  );
  useEffect(() => {
    setSelected(null);
    void conversations.load.run(true);
    // Kept in the address, so that a reload or a shared link opens the same agent's history.
    if (agentId && currentRoute().path === "/history") {
      navigate(withQuery("/history", { agent: agentId }), { replace: true });
    }
  }, [agentId]);

  return (
    <>
      <ErrorMessage error={error} />
      <div class="filters">
        <label for={`${id}-agent`}>Agent</label>
        <select id={`${id}-agent`} value={agentId} onChange={(e) => setAgentId(e.currentTarget.value)}>
          {agents?.length === 0 ? <option value="">No agents yet</option> : null}
          {(agents ?? []).map((agent) => (
            <option key={agent.id} value={agent.id}>
              {agent.name}
            </option>
          ))}
        </select>
      </div>
      <div class="split">
        <section aria-labelledby={`${id}-conversations`}>
          <h2 id={`${id}-conversations`}>Conversations</h2>
          <ErrorMessage error={conversations.load.error} />
          {conversations.items.length === 0 && !conversations.load.busy ? <p>No conversations yet.</p> : null}
          <ul class="conversations">
            {conversations.items.map((conversation) => (
              <li key={conversation.id}>
                <button
                  type="button"
                  class={`link ${selected?.id === conversation.id ? "selected" : ""}`}
                  aria-pressed={selected?.id === conversation.id}
                  onClick={() => setSelected(conversation)}
                >
                  {conversation.userId ?? "default user"} in {conversation.roomId ?? "default room"}
                  <span class="muted small">
                    {" "}
                    · {conversation.messageCount} messages · {formatTime(conversation.lastMessageAt)}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          {conversations.hasMore ? (
            <button
              type="button"
              onClick={() => conversations.load.run(false)}
              disabled={conversations.load.busy}
            >
              More conversations
            </button>
          ) : null}
        </section>
        <section aria-labelledby={`${id}-messages`}>
          {selected ? (
            <Messages
              key={selected.id}
              titleId={`${id}-messages`}
              conversation={selected}
              onDeleted={() => {
                conversations.setItems(conversations.items.filter((c) => c.id !== selected.id));
                setSelected(null);
              }}
              onGone={() => void conversations.load.run(true)}
            />
          ) : (
            <h2 id={`${id}-messages`}>Messages</h2>
          )}
          {selected ? null : <p class="muted">Pick a conversation to read it.</p>}
        </section>
      </div>
      <UserData
        onErased={(userId) => {
          // The list was read before the erasure: read it again, and close a conversation that is gone.
          if (selected?.userId === userId) setSelected(null);
          void conversations.load.run(true);
        }}
      />
    </>
  );
}

function Messages({
  conversation,
  titleId,
  onDeleted,
  onGone,
}: {
  conversation: Conversation;
  titleId: string;
  onDeleted: () => void;
  /** The conversation was deleted elsewhere (another tab, the API): the list is read again. */
  onGone: () => void;
}) {
  const pages = useCursorPages<HistoryMessage>(`/v1/agents/${conversation.agentId}/messages`, {
    conversationId: conversation.id,
    order: "desc",
  });
  useEffect(() => {
    void pages.load.run(true);
  }, [conversation.id]);
  useEffect(() => {
    if (pages.load.error instanceof ApiError && pages.load.error.code === "CONVERSATION_NOT_FOUND") onGone();
  }, [pages.load.error]);
  return (
    <>
      <h2 id={titleId}>
        Messages of {conversation.userId ?? "default user"} in {conversation.roomId ?? "default room"}
      </h2>
      <div class="toolbar">
        <ConfirmButton
          label="Delete conversation"
          title="Delete this conversation?"
          message={<p>Its {conversation.messageCount} messages are deleted and leave every later prompt.</p>}
          confirmLabel="Delete conversation"
          onConfirm={async () => {
            await api("DELETE", `/v1/agents/${conversation.agentId}/conversations/${conversation.id}`);
            onDeleted();
          }}
        />
      </div>
      <ErrorMessage error={pages.load.error} />
      <ol class="messages" aria-label="Messages, newest first">
        {pages.items.map((message) => (
          <li key={message.id} class={`turn ${message.role}`}>
            <div class="muted small">
              {message.role === "user"
                ? (message.userId ?? "user")
                : `agent${message.model ? ` (${message.model})` : ""}`}{" "}
              · {formatTime(message.createdAt)}
            </div>
            {message.role === "assistant" ? <Markdown text={message.text} /> : <p>{message.text}</p>}
          </li>
        ))}
      </ol>
      {pages.hasMore ? (
        <>
          <Sentinel disabled={pages.load.busy} onVisible={() => void pages.load.run(false)} />
          <button type="button" onClick={() => pages.load.run(false)} disabled={pages.load.busy}>
            Load older messages
          </button>
        </>
      ) : pages.items.length > 0 ? (
        <p class="muted small">The beginning of the conversation.</p>
      ) : null}
    </>
  );
}

function UserData({ onErased }: { onErased: (userId: string) => void }) {
  const id = useId();
  const [userId, setUserId] = useState("");
  const [result, setResult] = useState("");
  const trimmed = userId.trim();
  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>A user's data</h2>
      <p class="muted">Export every message of a user (NDJSON), or erase them from every agent.</p>
      <div class="row wrap">
        <label for={`${id}-user`}>User id</label>
        <input
          id={`${id}-user`}
          value={userId}
          onInput={(e) => {
            setUserId(e.currentTarget.value);
            setResult("");
          }}
        />
        <a
          class={`button ${trimmed ? "" : "disabled"}`}
          href={trimmed ? `/v1/users/${encodeURIComponent(trimmed)}/export` : undefined}
          aria-disabled={trimmed ? undefined : "true"}
          download={`${trimmed || "user"}.ndjson`}
        >
          Export
        </a>
        <ConfirmButton
          label="Erase"
          disabled={!trimmed}
          title={`Erase ${trimmed}'s data?`}
          message={
            <p>
              Every conversation and message of this user is deleted in every agent. This cannot be undone.
            </p>
          }
          confirmLabel="Erase user data"
          onConfirm={async () => {
            // The notice of an earlier erasure must not stand beside this one's error.
            setResult("");
            const { data } = await api<{ messagesDeleted: number }>(
              "DELETE",
              `/v1/users/${encodeURIComponent(trimmed)}`,
            );
            setResult(`Erased ${data.messagesDeleted} message(s) of ${trimmed}.`);
            onErased(trimmed);
          }}
        />
      </div>
      <p aria-live="polite" class="notice">
        {result}
      </p>
    </section>
  );
}
