import type { AgentRun, BackgroundMessage, MessageApproveParams, PendingToolCall } from "@agentry/sdk";
import { useEffect, useId, useState } from "preact/hooks";
import { api } from "../api";
import { ErrorMessage, formatTime, useAction } from "../widgets/common";

/** A message paused before tool calls that wait for a person's answer. */
interface PausedMessage {
  id: string;
  userId: string | null;
  createdAt: string;
  expiresAt: string;
  calls: PendingToolCall[];
}

/** The agent's paused messages, each read for the calls it still waits on (one ended meanwhile is left out). */
async function pausedMessages(agentId: string): Promise<PausedMessage[]> {
  const { data: runs } = await api<AgentRun[]>("GET", `/v1/agents/${agentId}/runs`, {
    query: { status: "requires_action", limit: "100" },
  });
  const read = await Promise.all(
    runs.map(async (run) => {
      const { data } = await api<BackgroundMessage>("GET", `/v1/agents/${agentId}/messages/${run.messageId}`);
      if (data.status !== "requires_action") return null;
      return {
        id: run.messageId,
        userId: run.userId,
        createdAt: run.createdAt,
        expiresAt: data.approvalExpiresAt,
        calls: data.pendingToolCalls,
      };
    }),
  );
  return read.filter((message): message is PausedMessage => message !== null);
}

/** Arguments as the model wrote them, indented when they are JSON. */
function argumentsText(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * The agent's messages paused for tool approvals: each pending call's tool and arguments, with Approve, and
 * Reject with an optional reason given to the model. A message resumes once all its calls are answered.
 */
export function ApprovalsPanel({ agentId }: { agentId: string }) {
  const id = useId();
  const [messages, setMessages] = useState<PausedMessage[] | null>(null);
  const [notice, setNotice] = useState("");
  // The call whose refusal is being worded, and the reason so far.
  const [refusing, setRefusing] = useState<{ callId: string; reason: string } | null>(null);
  const load = useAction(async () => {
    setMessages(await pausedMessages(agentId));
  });
  useEffect(() => {
    void load.run();
  }, [agentId]);

  const answer = useAction(
    async (messageId: string, call: PendingToolCall, approve: boolean, reason: string) => {
      setNotice("");
      const body: MessageApproveParams = { toolCallIds: [call.id], approve };
      if (!approve && reason.trim()) body.reason = reason.trim();
      await api("POST", `/v1/agents/${agentId}/messages/${messageId}/approve`, { body });
      setRefusing(null);
      setNotice(approve ? `${call.tool} approved.` : `${call.tool} rejected.`);
      await load.run();
    },
  );

  return (
    <section class="approvals" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Waiting for approval</h2>
      <p class="muted">
        Messages paused before tool calls that need a person's approval. An approved call runs; a rejected one
        is reported to the model with the reason. The message goes on in the background once every call is
        answered.
      </p>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      <ErrorMessage error={load.error ?? answer.error} />
      <button type="button" disabled={load.busy} onClick={() => void load.run()}>
        Refresh
      </button>
      {messages === null ? (
        load.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : messages.length === 0 ? (
        <p>No message is waiting for approval.</p>
      ) : (
        <ul class="paused-messages">
          {messages.map((message) => (
            <li key={message.id} data-message={message.id}>
              <p>
                Message <code>{message.id}</code>
                {message.userId ? ` of ${message.userId}` : ""}, sent {formatTime(message.createdAt)}; waits
                until {formatTime(message.expiresAt)}.
              </p>
              <ul>
                {message.calls.map((call) => (
                  <li key={call.id} data-call={call.id}>
                    <dl>
                      <dt>Tool</dt>
                      <dd>
                        <strong>{call.tool}</strong>
                      </dd>
                      <dt>Arguments</dt>
                      <dd>
                        <pre>{argumentsText(call.arguments)}</pre>
                      </dd>
                    </dl>
                    {refusing?.callId === call.id ? (
                      <form
                        onSubmit={(event) => {
                          event.preventDefault();
                          void answer.run(message.id, call, false, refusing.reason);
                        }}
                      >
                        <label for={`${id}-${call.id}-reason`}>Reason (optional, given to the model)</label>
                        <input
                          id={`${id}-${call.id}-reason`}
                          value={refusing.reason}
                          onInput={(e) => setRefusing({ callId: call.id, reason: e.currentTarget.value })}
                        />
                        <button type="submit" class="danger" disabled={answer.busy}>
                          Reject call
                        </button>
                        <button type="button" onClick={() => setRefusing(null)}>
                          Cancel
                        </button>
                      </form>
                    ) : (
                      <p class="actions">
                        <button
                          type="button"
                          class="primary"
                          disabled={answer.busy}
                          onClick={() => void answer.run(message.id, call, true, "")}
                        >
                          Approve
                        </button>
                        <button
                          type="button"
                          class="danger"
                          disabled={answer.busy}
                          onClick={() => setRefusing({ callId: call.id, reason: "" })}
                        >
                          Reject
                        </button>
                      </p>
                    )}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
