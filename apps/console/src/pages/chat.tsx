import type { Agent, HistoryMessage, Conversation as StoredConversation } from "@agentry/sdk";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { allAgents } from "../agents-api";
import { api } from "../api";
import { BASE, currentRoute } from "../router";
import { ErrorMessage } from "../widgets/common";
import { Markdown } from "../widgets/markdown";
import {
  type Conversation,
  conversationKey,
  type LiveRun,
  liveRuns,
  resumeKeptRuns,
  sendMessage,
  stopFollowing,
  type Turn,
} from "./chat-runs";

/** The most recent messages of a conversation the transcript shows; History has the rest. */
const SHOWN = 100;

/** The stored messages of one conversation, oldest first (none if it has not begun). */
async function storedTurns({ agentId, userId, roomId }: Conversation): Promise<HistoryMessage[]> {
  const { data: conversations } = await api<StoredConversation[]>(
    "GET",
    `/v1/agents/${agentId}/conversations`,
    {
      query: { userId, roomId, limit: 100 },
    },
  );
  // Without a room (or a user) the filter cannot name the default one: it is the one with none.
  const found = conversations.find((c) => (c.userId ?? "") === userId && (c.roomId ?? "") === roomId);
  if (!found) return [];
  const { data } = await api<HistoryMessage[]>("GET", `/v1/agents/${agentId}/messages`, {
    query: { conversationId: found.id, order: "desc", limit: SHOWN },
  });
  return data.reverse();
}

function turnOf(message: HistoryMessage): Turn {
  if (message.role === "user") return { key: message.id, role: "user", text: message.text };
  return {
    key: message.id,
    role: "assistant",
    text: message.text,
    tools: message.toolCalls ?? [],
    meta: `${String(message.modelProvider)}/${String(message.model)} · ${message.usage?.totalTokens ?? 0} tokens · ${String(message.latencyMs)} ms`,
  };
}

const CHOSEN = "agentry.console.chat";

/**
 * The address keeps the chosen agent, user and room, so that a reload comes back to the same conversation; so
 * does the tab, for the Chat link of the menu, which names none.
 */
function remember({ agentId, userId, roomId }: Conversation): void {
  const query = new URLSearchParams();
  if (agentId) query.set("agent", agentId);
  query.set("user", userId);
  if (roomId) query.set("room", roomId);
  history.replaceState(history.state, "", `${BASE}/chat?${query}`);
  try {
    sessionStorage.setItem(CHOSEN, query.toString());
  } catch {
    // Without storage the menu's link opens the first agent's default conversation.
  }
}

/** The conversation the address names, else the one chosen last in this tab. */
function chosen(): URLSearchParams {
  const query = currentRoute().query;
  if (query.has("agent")) return query;
  try {
    return new URLSearchParams(sessionStorage.getItem(CHOSEN) ?? "");
  } catch {
    return query;
  }
}

/**
 * Chat: messages to an agent as a user in a room, the reply streamed as it arrives, with a stop button. The
 * transcript is the stored conversation of the chosen agent, user and room, then the replies still arriving.
 */
export function ChatPage() {
  const id = useId();
  const [query] = useState(chosen);
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [agentId, setAgentId] = useState(query.get("agent") ?? "");
  const [userId, setUserId] = useState(query.get("user") ?? "console-user");
  const [roomId, setRoomId] = useState(query.get("room") ?? "");
  const [text, setText] = useState("");
  const [stored, setStored] = useState<{ key: string; messages: HistoryMessage[] } | null>(null);
  const [runs, setRuns] = useState<LiveRun[]>(liveRuns.value);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [historyError, setHistoryError] = useState<unknown>(null);
  const log = useRef<HTMLDivElement>(null);

  const conversation: Conversation = { agentId, userId: userId.trim(), roomId: roomId.trim() };
  const key = conversationKey(conversation);

  useEffect(() => {
    resumeKeptRuns();
    allAgents().then((list) => {
      setAgents(list);
      if (!agentId && list[0]) setAgentId(list[0].id);
    }, setLoadError);
    return liveRuns.subscribe(setRuns);
  }, []);
  useEffect(() => {
    if (!agentId) return;
    remember(conversation);
    let current = true;
    // Typing a user or room id reads the history once the typing stops.
    const timer = setTimeout(() => {
      storedTurns(conversation).then(
        (messages) => {
          if (!current) return;
          setHistoryError(null);
          setStored({ key, messages });
        },
        (error: unknown) => {
          if (current) setHistoryError(error);
        },
      );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [key]);

  const mine = runs.filter((run) => conversationKey(run) === key);
  const storedHere = stored?.key === key ? stored.messages : [];
  const storedIds = new Set(storedHere.map((message) => message.id));
  const turns: Turn[] = [
    ...storedHere.map(turnOf),
    // A reply the server has stored by now is shown as stored.
    ...mine
      .filter((run) => !run.messageId || !storedIds.has(run.messageId))
      .flatMap((run): Turn[] => [
        { key: `user-${run.reply.key}`, role: "user", text: run.userText },
        run.reply,
      ]),
  ];
  const streamingRun = mine.find((run) => run.reply.streaming);

  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [turns.length, turns.at(-1)?.text]);

  const submit = () => {
    const message = text.trim();
    if (!message || !agentId || streamingRun) return;
    setText("");
    sendMessage(conversation, message);
  };

  return (
    <div class="chat">
      <ErrorMessage error={loadError} />
      <ErrorMessage error={historyError} />
      <div class="filters">
        <label for={`${id}-agent`}>Agent</label>
        <select id={`${id}-agent`} value={agentId} onChange={(e) => setAgentId(e.currentTarget.value)}>
          {agents?.length === 0 ? <option value="">No agents yet</option> : null}
          {(agents ?? []).map((agent) => (
            <option key={agent.id} value={agent.id}>
              {agent.name} ({agent.status})
            </option>
          ))}
        </select>
        <label for={`${id}-user`}>User id</label>
        <input id={`${id}-user`} value={userId} onInput={(e) => setUserId(e.currentTarget.value)} />
        <label for={`${id}-room`}>Room id</label>
        <input
          id={`${id}-room`}
          value={roomId}
          placeholder="default"
          onInput={(e) => setRoomId(e.currentTarget.value)}
        />
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to scroll from the keyboard */}
      <div class="transcript" ref={log} role="log" aria-live="polite" aria-label="Conversation" tabIndex={0}>
        {turns.length === 0 && stored?.key === key ? (
          <p class="muted">Messages and replies appear here.</p>
        ) : null}
        {turns.map((turn) => (
          <article key={turn.key} class={`turn ${turn.role}`} aria-busy={turn.streaming ? "true" : undefined}>
            <h2 class="visually-hidden">{turn.role === "user" ? "You" : "Agent"}</h2>
            {turn.role === "user" ? <p>{turn.text}</p> : <Markdown text={turn.text} />}
            {(turn.tools ?? []).map((tool) => (
              <details key={tool.id} class="tool">
                <summary>
                  Tool <code>{tool.name}</code>{" "}
                  {tool.ok === undefined ? "running…" : tool.ok ? "done" : "failed"}
                </summary>
                <pre class="code">
                  <code>
                    {JSON.stringify(
                      { arguments: tool.arguments, output: tool.output, error: tool.error },
                      null,
                      2,
                    )}
                  </code>
                </pre>
              </details>
            ))}
            {turn.streaming ? <span class="cursor">▍</span> : null}
            {turn.stopped ? (
              <p class="muted small">
                Stopped. The agent still finishes this reply, and the conversation keeps it.
              </p>
            ) : null}
            {turn.error ? <ErrorMessage error={turn.error} /> : null}
            {turn.meta ? <p class="muted small">{turn.meta}</p> : null}
          </article>
        ))}
      </div>
      <form
        class="composer"
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <label for={`${id}-text`} class="visually-hidden">
          Message
        </label>
        <textarea
          id={`${id}-text`}
          rows={2}
          class="grow"
          placeholder="Write a message; Enter sends, Shift+Enter adds a line"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              submit();
            }
          }}
        />
        {streamingRun ? (
          <button type="button" class="danger" onClick={() => stopFollowing(streamingRun.local)}>
            Stop
          </button>
        ) : (
          <button type="submit" class="primary" disabled={!agentId || text.trim() === ""}>
            Send
          </button>
        )}
      </form>
    </div>
  );
}
