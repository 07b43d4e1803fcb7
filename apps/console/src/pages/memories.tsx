import type { Agent, Memory } from "@agentry/sdk";
import { useEffect, useId, useState } from "preact/hooks";
import { allAgents } from "../agents-api";
import { api, withQuery } from "../api";
import { currentRoute, navigate } from "../router";
import { ConfirmButton, ErrorMessage, formatTime, useAction } from "../widgets/common";
import { useCursorPages } from "./history";

/** Memories: an agent's memories of one user (`?agent=` and `?user=` in the address). */
export function MemoriesPage() {
  const id = useId();
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [agentId, setAgentId] = useState("");
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    allAgents().then((list) => {
      setAgents(list);
      const named = currentRoute().query.get("agent");
      const chosen = list.find((agent) => agent.id === named) ?? list[0];
      if (chosen) setAgentId(chosen.id);
    }, setError);
  }, []);
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
      {agentId ? <UserMemories key={agentId} agentId={agentId} /> : null}
    </>
  );
}

/**
 * What an agent remembers of one user (docs/api/memories.md): the memories newest first, a full-text search, and
 * adding, editing and deleting them by hand. An edit adds the new text and deletes the old memory (the API keeps
 * memories as written, with no update).
 */
export function UserMemories({ agentId }: { agentId: string }) {
  const id = useId();
  const [userInput, setUserInput] = useState(() => currentRoute().query.get("user") ?? "");
  const [userId, setUserId] = useState(() => currentRoute().query.get("user")?.trim() ?? "");
  const [queryInput, setQueryInput] = useState("");
  const [query, setQuery] = useState("");
  const [text, setText] = useState("");
  const pages = useCursorPages<Memory>(
    agentId && userId ? `/v1/agents/${agentId}/memories` : null,
    query ? { userId, q: query } : { userId },
  );
  useEffect(() => {
    void pages.load.run(true);
    // Kept in the address, so that a reload or a shared link opens the same user's memories.
    if (currentRoute().path === "/memories") {
      navigate(withQuery("/memories", userId ? { agent: agentId, user: userId } : { agent: agentId }), {
        replace: true,
      });
    }
  }, [agentId, userId, query]);

  const add = useAction(async () => {
    const { data } = await api<Memory>("POST", `/v1/agents/${agentId}/memories`, {
      body: { userId, text: text.trim() },
    });
    setText("");
    pages.setItems([data, ...pages.items.filter((memory) => memory.id !== data.id)]);
  });

  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Memories of a user</h2>
      <p class="muted">
        What this agent remembers of a user across conversations, learnt after turns or added here.
      </p>
      <form
        class="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          setUserId(userInput.trim());
          setQuery("");
          setQueryInput("");
        }}
      >
        <label for={`${id}-user`}>User id</label>
        <input id={`${id}-user`} value={userInput} onInput={(e) => setUserInput(e.currentTarget.value)} />
        <button type="submit" disabled={!userInput.trim() || !agentId}>
          Show memories
        </button>
      </form>
      {userId ? (
        <>
          <form
            class="row wrap"
            onSubmit={(e) => {
              e.preventDefault();
              setQuery(queryInput.trim());
            }}
          >
            <label for={`${id}-q`}>Search</label>
            <input
              id={`${id}-q`}
              type="search"
              maxLength={500}
              value={queryInput}
              onInput={(e) => setQueryInput(e.currentTarget.value)}
            />
            <button type="submit">Search</button>
            {query ? (
              <button
                type="button"
                class="link"
                onClick={() => {
                  setQuery("");
                  setQueryInput("");
                }}
              >
                Clear search
              </button>
            ) : null}
          </form>
          <ErrorMessage error={pages.load.error} />
          {pages.items.length === 0 && !pages.load.busy ? (
            <p>{query ? `No memory of ${userId} matches “${query}”.` : `No memories of ${userId} yet.`}</p>
          ) : null}
          <ul class="memories" aria-label={`Memories of ${userId}`}>
            {pages.items.map((memory) => (
              <MemoryItem
                key={memory.id}
                memory={memory}
                onReplaced={(next) =>
                  pages.setItems(
                    pages.items.flatMap((m) =>
                      m.id === memory.id ? (pages.items.some((o) => o.id === next.id) ? [] : [next]) : [m],
                    ),
                  )
                }
                onDeleted={() => pages.setItems(pages.items.filter((m) => m.id !== memory.id))}
              />
            ))}
          </ul>
          {pages.hasMore ? (
            <button type="button" onClick={() => pages.load.run(false)} disabled={pages.load.busy}>
              More memories
            </button>
          ) : null}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void add.run();
            }}
          >
            <label for={`${id}-text`}>New memory of {userId}</label>
            <textarea
              id={`${id}-text`}
              rows={2}
              maxLength={1000}
              value={text}
              placeholder="The user prefers short answers."
              onInput={(e) => setText(e.currentTarget.value)}
            />
            <ErrorMessage error={add.error} />
            <div>
              <button type="submit" disabled={!text.trim() || add.busy}>
                Add memory
              </button>
            </div>
          </form>
        </>
      ) : null}
    </section>
  );
}

function MemoryItem({
  memory,
  onReplaced,
  onDeleted,
}: {
  memory: Memory;
  onReplaced: (next: Memory) => void;
  onDeleted: () => void;
}) {
  const id = useId();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(memory.text);
  const path = `/v1/agents/${memory.agentId}/memories`;
  // The new text first: a failure leaves the old memory in place.
  const save = useAction(async () => {
    const { data } = await api<Memory>("POST", path, { body: { userId: memory.userId, text: text.trim() } });
    if (data.id !== memory.id) await api("DELETE", `${path}/${memory.id}`);
    setEditing(false);
    onReplaced(data);
  });
  if (editing) {
    return (
      <li class="memory">
        <form
          class="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          <label for={`${id}-edit`} class="visually-hidden">
            Memory text
          </label>
          <input
            id={`${id}-edit`}
            value={text}
            maxLength={1000}
            onInput={(e) => setText(e.currentTarget.value)}
          />
          <button type="submit" disabled={!text.trim() || save.busy}>
            Save
          </button>
          <button type="button" class="link" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
        <ErrorMessage error={save.error} />
      </li>
    );
  }
  return (
    <li class="memory">
      <span>{memory.text}</span>
      <span class="muted small">
        {" "}
        · {memory.source ? "learnt from a message" : "added by hand"} · {formatTime(memory.createdAt)}
      </span>{" "}
      <button
        type="button"
        class="link"
        onClick={() => {
          setText(memory.text);
          setEditing(true);
        }}
      >
        Edit
      </button>{" "}
      <ConfirmButton
        label="Delete"
        title="Delete this memory?"
        message={<p>“{memory.text}” is forgotten and no longer reaches this user's prompts.</p>}
        confirmLabel="Delete memory"
        onConfirm={async () => {
          await api("DELETE", `/v1/agents/${memory.agentId}/memories/${memory.id}`);
          onDeleted();
        }}
      />
    </li>
  );
}
