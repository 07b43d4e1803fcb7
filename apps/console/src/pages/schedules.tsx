import type { Schedule } from "@agentry/sdk";
import { useEffect, useId, useState } from "preact/hooks";
import { api } from "../api";
import { ConfirmButton, ErrorMessage, Field, formatTime, TableScroll, useAction } from "../widgets/common";

/** The last fire of a schedule, in words. */
function lastFireOf(schedule: Schedule): string {
  const fire = schedule.lastFire;
  if (!fire) return "Not fired yet";
  const when = formatTime(fire.scheduledAt);
  if (fire.status === "skipped") return `${when}: skipped (${fire.error?.message ?? "no message sent"})`;
  if (fire.status === "failed") return `${when}: failed (${fire.error?.code ?? "error"})`;
  return `${when}: ${fire.status}`;
}

/**
 * The agent's schedules: each one's expression and time zone, its next fire, its last fire's outcome, a switch to
 * pause or resume it and a button to delete it; and a form to add one.
 */
export function SchedulesPanel({ agentId }: { agentId: string }) {
  const id = useId();
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [notice, setNotice] = useState("");
  const [cron, setCron] = useState("0 9 * * 1-5");
  const [timezone, setTimezone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC");
  const [text, setText] = useState("");
  const load = useAction(async () => {
    const { data } = await api<Schedule[]>("GET", `/v1/agents/${agentId}/schedules`, {
      query: { limit: "100" },
    });
    setSchedules(data);
  });
  useEffect(() => {
    void load.run();
  }, [agentId]);

  const create = useAction(async () => {
    setNotice("");
    const { data } = await api<Schedule>("POST", `/v1/agents/${agentId}/schedules`, {
      body: { cron: cron.trim(), timezone: timezone.trim(), text },
    });
    setNotice(`Schedule created: next fire ${formatTime(data.nextFireAt)}.`);
    setText("");
    await load.run();
  });
  const toggle = useAction(async (schedule: Schedule) => {
    setNotice("");
    const { data } = await api<Schedule>("PATCH", `/v1/agents/${agentId}/schedules/${schedule.id}`, {
      body: { enabled: !schedule.enabled },
    });
    setNotice(data.enabled ? `Schedule ${data.cron} resumed.` : `Schedule ${data.cron} paused.`);
    await load.run();
  });

  return (
    <section class="schedules" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Schedules</h2>
      <p class="muted">
        At each time of a cron expression the agent is sent the message below in the background; its reply
        goes to the conversation of the schedule and to webhooks.
      </p>
      <p aria-live="polite" class="notice">
        {notice}
      </p>
      <ErrorMessage error={load.error ?? toggle.error} />
      {schedules === null ? (
        load.error ? null : (
          <p aria-busy="true">Loading…</p>
        )
      ) : schedules.length === 0 ? (
        <p>This agent has no schedules.</p>
      ) : (
        <TableScroll label="Schedules of the agent">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Message</th>
                <th scope="col">Next fire</th>
                <th scope="col">Last fire</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {schedules.map((schedule) => (
                <tr key={schedule.id} data-schedule={schedule.id}>
                  <td>
                    <code>{schedule.cron}</code> <span class="muted">{schedule.timezone}</span>
                  </td>
                  <td>{schedule.text}</td>
                  <td>{schedule.enabled ? formatTime(schedule.nextFireAt) : "Paused"}</td>
                  <td>
                    {lastFireOf(schedule)}
                    {schedule.skippedFires > 0 ? ` · ${schedule.skippedFires} skipped while down` : ""}
                  </td>
                  <td class="actions">
                    <button type="button" disabled={toggle.busy} onClick={() => void toggle.run(schedule)}>
                      {schedule.enabled ? "Pause" : "Resume"}
                    </button>
                    <ConfirmButton
                      label="Delete"
                      title="Delete this schedule?"
                      message={`It will not fire again (${schedule.cron}, ${schedule.timezone}).`}
                      confirmLabel="Delete schedule"
                      onConfirm={async () => {
                        await api("DELETE", `/v1/agents/${agentId}/schedules/${schedule.id}`);
                        setNotice("Schedule deleted.");
                        await load.run();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <form
        class="add-schedule"
        onSubmit={(event) => {
          event.preventDefault();
          void create.run();
        }}
      >
        <h3>Add a schedule</h3>
        <Field
          id={`${id}-cron`}
          label="Cron expression"
          hint='5 fields, e.g. "0 9 * * 1-5" (09:00 on weekdays)'
        >
          <input
            id={`${id}-cron`}
            value={cron}
            required
            aria-describedby={`${id}-cron-hint`}
            onInput={(e) => setCron(e.currentTarget.value)}
          />
        </Field>
        <Field id={`${id}-tz`} label="Time zone" hint='An IANA name, e.g. "Europe/Berlin" or "UTC"'>
          <input
            id={`${id}-tz`}
            value={timezone}
            required
            aria-describedby={`${id}-tz-hint`}
            onInput={(e) => setTimezone(e.currentTarget.value)}
          />
        </Field>
        <Field id={`${id}-text`} label="Message">
          <textarea
            id={`${id}-text`}
            value={text}
            required
            rows={2}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </Field>
        <ErrorMessage error={create.error} />
        <button type="submit" class="primary" disabled={create.busy}>
          Add schedule
        </button>
      </form>
    </section>
  );
}
