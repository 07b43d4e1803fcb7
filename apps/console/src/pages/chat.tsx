import { useEffect, useId, useRef, useState } from "preact/hooks";
import { type Agent, allAgents } from "../agents-api";
import { ApiError, send } from "../api";
import { currentRoute } from "../router";
import { readEvents } from "../sse";
import { ErrorMessage } from "../widgets/common";
import { Markdown } from "../widgets/markdown";

interface ToolCall {
  id: string;
  name: string;
  arguments?: unknown;
  ok?: boolean;
  output?: unknown;
  error?: unknown;
}

interface Turn {
  key: number;
  role: "user" | "assistant";
  text: string;
  streaming?: boolean;
  stopped?: boolean;
  error?: ApiError;
  tools?: ToolCall[];
  meta?: string;
}

let turnKey = 0;

/** Chat: messages to an agent as a user in a room, the reply streamed as it arrives, with a stop button. */
export function ChatPage() {
  const id = useId();
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [agentId, setAgentId] = useState(currentRoute().query.get("agent") ?? "");
  const [userId, setUserId] = useState("console-user");
  const [roomId, setRoomId] = useState("");
  const [text, setText] = useState("");
  const [turns, setTurns] = useState<Turn[]>([]);
  const [loadError, setLoadError] = useState<unknown>(null);
  const controller = useRef<AbortController | null>(null);
  const [streaming, setStreaming] = useState(false);
  const log = useRef<HTMLDivElement>(null);

  useEffect(() => {
    allAgents().then((list) => {
      setAgents(list);
      if (!agentId && list[0]) setAgentId(list[0].id);
    }, setLoadError);
    return () => controller.current?.abort();
  }, []);
  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [turns]);

  const update = (key: number, change: (turn: Turn) => Turn) =>
    setTurns((all) => all.map((turn) => (turn.key === key ? change(turn) : turn)));

  const sendMessage = async () => {
    const message = text.trim();
    if (!message || !agentId || streaming) return;
    setText("");
    const reply: Turn = { key: ++turnKey, role: "assistant", text: "", streaming: true, tools: [] };
    setTurns((all) => [...all, { key: ++turnKey, role: "user", text: message }, reply]);
    const abort = new AbortController();
    controller.current = abort;
    setStreaming(true);
    try {
      const response = await send("POST", `/v1/agents/${agentId}/messages`, {
        body: { text: message, stream: true, ...(userId ? { userId } : {}), ...(roomId ? { roomId } : {}) },
        signal: abort.signal,
        headers: { accept: "text/event-stream" },
      });
      for await (const event of readEvents(response.body!)) {
        const data = JSON.parse(event.data) as Record<string, unknown>;
        if (event.event === "message.delta") {
          update(reply.key, (turn) => ({ ...turn, text: turn.text + String(data.text ?? "") }));
        } else if (event.event === "message.completed") {
          const usage = data.usage as { totalTokens?: number } | undefined;
          update(reply.key, (turn) => ({
            ...turn,
            text: String(data.text ?? turn.text),
            streaming: false,
            meta: `${String(data.modelProvider)}/${String(data.model)} · ${usage?.totalTokens ?? 0} tokens · ${String(data.latencyMs)} ms`,
          }));
        } else if (event.event === "error") {
          update(reply.key, (turn) => ({
            ...turn,
            streaming: false,
            error: new ApiError(0, String(data.code), String(data.message)),
          }));
        } else if (event.event === "tool.call") {
          update(reply.key, (turn) => ({
            ...turn,
            tools: [...(turn.tools ?? []), data as unknown as ToolCall],
          }));
        } else if (event.event === "tool.result") {
          update(reply.key, (turn) => ({
            ...turn,
            tools: (turn.tools ?? []).map((tool) => (tool.id === data.id ? { ...tool, ...data } : tool)),
          }));
        }
      }
    } catch (error) {
      if (abort.signal.aborted) update(reply.key, (turn) => ({ ...turn, stopped: true }));
      else
        update(reply.key, (turn) => ({
          ...turn,
          error: error instanceof ApiError ? error : new ApiError(0, "STREAM_BROKEN", String(error)),
        }));
    } finally {
      update(reply.key, (turn) => ({ ...turn, streaming: false }));
      setStreaming(false);
      controller.current = null;
    }
  };

  return (
    <div class="chat">
      <ErrorMessage error={loadError} />
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
        {turns.length === 0 ? <p class="muted">Messages and replies appear here.</p> : null}
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
            {turn.stopped ? <p class="muted small">Stopped.</p> : null}
            {turn.error ? <ErrorMessage error={turn.error} /> : null}
            {turn.meta ? <p class="muted small">{turn.meta}</p> : null}
          </article>
        ))}
      </div>
      <form
        class="composer"
        onSubmit={(event) => {
          event.preventDefault();
          void sendMessage();
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
              void sendMessage();
            }
          }}
        />
        {streaming ? (
          <button type="button" class="danger" onClick={() => controller.current?.abort()}>
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
