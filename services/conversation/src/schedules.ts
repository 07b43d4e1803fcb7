import { newId, type Repetition, repeatEvery } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import { type Agent, AgentStatus, AgentView, readableAgent } from "@agentry/proto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Cron } from "croner";
import type { MessageRuns } from "./message-runs.js";
import type { ConversationStore, ScheduleRecord } from "./store/types.js";

/*
 * Schedules (docs/api/schedules.md): a cron expression in an IANA time zone, each fire of which sends the
 * schedule's text to its agent as one background message. Expressions and time zones, daylight saving time
 * included, are croner's; nothing here parses a cron expression.
 */

/** How many of a schedule's next fire times a read shows. */
export const NEXT_FIRES_SHOWN = 5;
/** A fire missed while every process was down still runs at start if it is less late than this; else skipped. */
export const CATCH_UP_MS = 60 * 60 * 1000;
/** SCHEDULE_SCAN_MS when unset: how often each process looks for schedules whose fire is due. */
export const DEFAULT_SCHEDULE_SCAN_MS = 5_000;
/** How long the rows of fires are kept (they make a fire run once; a fire time is never claimed this late). */
const FIRE_ROWS_KEPT_MS = 7 * 24 * 60 * 60 * 1000;
/** How often old fire rows are removed. */
const PRUNE_MS = 60 * 60 * 1000;
/** Due schedules claimed per scan. */
const PAGE = 100;
/** Missed fire times counted one by one at most, per claim: an every-second schedule down for weeks stops here. */
const MAX_COUNTED = 100_000;

export const SCHEDULE_BOUNDS = { cronMaxLength: 200, timezoneMaxLength: 100 } as const;

/** How each field of a schedule must look, as the 400 says it. */
const CRON_HINT =
  'must be a cron expression of 5 fields (minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5") or 6 with seconds first (e.g. "*/30 * * * * *")';
const TIMEZONE_HINT = 'must be an IANA time zone name, e.g. "Europe/Berlin", "America/New_York" or "UTC"';

/** The parsed expression of a schedule; throws INVALID_REQUEST naming `cron` or `timezone` when either is bad. */
export function scheduleCron(cron: string, timezone: string): Cron {
  if (!validTimezone(timezone)) {
    throw invalid("timezone", `${JSON.stringify(timezone)} ${TIMEZONE_HINT}`);
  }
  if (cron.trim() === "" || cron.length > SCHEDULE_BOUNDS.cronMaxLength) {
    throw invalid("cron", CRON_HINT);
  }
  try {
    return new Cron(cron, { timezone, mode: "5-or-6-parts", paused: true });
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, "") : String(error);
    throw invalid("cron", `${JSON.stringify(cron)} is not valid (${reason}); it ${CRON_HINT}`);
  }
}

function validTimezone(timezone: string): boolean {
  if (timezone === "" || timezone.length > SCHEDULE_BOUNDS.timezoneMaxLength) return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

function invalid(field: "cron" | "timezone", issue: string): AppError {
  return new AppError("INVALID_REQUEST", `The schedule's ${field} ${issue}.`, {
    details: [{ field, issue }],
  });
}

/** The first `n` fire times strictly after `after`. */
export function nextFires(cron: Cron, after: Date, n: number): Date[] {
  return cron.nextRuns(n, after);
}

/** The first fire time strictly after `after`, as stored; null when the expression has none. */
export function nextFireAfter(cron: Cron, after: Date): string | null {
  return cron.nextRun(after)?.toISOString() ?? null;
}

/**
 * What a process does with a due schedule at `now`: the latest due fire time runs if it is less than CATCH_UP_MS
 * late; every other due time (those before it, and it when too late) is skipped and counted.
 */
export function planFires(
  cron: Cron,
  due: string,
  now: Date,
): { run: string | null; skipped: number; next: string | null } {
  let latest = new Date(due);
  let count = 1;
  for (
    let next = cron.nextRun(latest);
    next && next <= now && count < MAX_COUNTED;
    next = cron.nextRun(next)
  ) {
    latest = next;
    count += 1;
  }
  // Past MAX_COUNTED the fires in between are not counted one by one; the latest due one is found from now.
  if (count >= MAX_COUNTED) {
    const last = cron.previousRuns(1, new Date(now.getTime() + 1000))[0];
    if (last && last > latest) latest = last;
  }
  const late = now.getTime() - latest.getTime();
  const runs = late < CATCH_UP_MS;
  return {
    run: runs ? latest.toISOString() : null,
    skipped: runs ? count - 1 : count,
    next: nextFireAfter(cron, now),
  };
}

/** Where the scheduler reads an agent's current record at fire time (the registry's AgentService). */
export interface AgentDirectory {
  /** The agent, or null when the account has no such agent (it was deleted). */
  getAgent(accountId: string, agentId: string): Promise<Agent | null>;
}

export interface SchedulerOptions {
  /** SCHEDULE_SCAN_MS. */
  scanMs?: number;
}

/**
 * Runs the fires of every schedule in the store: every `scanMs` each process reads the due schedules and claims
 * each fire (`claimFire`: one conditional update and the fire's unique row, in one transaction), so that any
 * number of processes sharing the store run each fire once. The claimer then starts the fire's background
 * message (a durable run, taken over by another process if this one stops).
 */
export class Scheduler {
  private scan: Repetition | undefined;
  private prune: Repetition | undefined;

  constructor(
    private readonly store: ConversationStore,
    private readonly runs: MessageRuns,
    private readonly agents: AgentDirectory,
    private readonly logger: Logger,
    private readonly options: SchedulerOptions = {},
  ) {}

  start(): void {
    this.scan ??= repeatEvery(this.options.scanMs ?? DEFAULT_SCHEDULE_SCAN_MS, async () => {
      await this.scanOnce();
    });
    this.prune ??= repeatEvery(PRUNE_MS, () => this.pruneOnce());
    // A fire missed while everything was down runs at start, not one interval later.
    void this.scanOnce();
  }

  async close(): Promise<void> {
    await Promise.all([this.scan?.stop(), this.prune?.stop()]);
    this.scan = undefined;
    this.prune = undefined;
  }

  /** Claims and runs the fires due now; how many this process ran. */
  async scanOnce(): Promise<number> {
    let ran = 0;
    try {
      const now = new Date();
      for (const schedule of await this.store.schedules.dueSchedules(now.toISOString(), PAGE)) {
        if (await this.fire(schedule, now)) ran += 1;
      }
    } catch (error) {
      this.logger.warn({ err: error }, "could not look for schedules to fire");
    }
    return ran;
  }

  private async fire(schedule: ScheduleRecord, now: Date): Promise<boolean> {
    const due = schedule.nextFireAt;
    if (due === null) return false;
    let cron: Cron;
    try {
      cron = scheduleCron(schedule.cron, schedule.timezone);
    } catch {
      // Stored before a change of what is valid: it stays, without fires, until it is fixed or deleted.
      await this.store.schedules.claimFire({
        scheduleId: schedule.id,
        scheduledAt: due,
        nextFireAt: null,
        skipped: 0,
        fire: null,
      });
      return false;
    }
    const plan = planFires(cron, due, now);
    if (plan.run === null) {
      await this.store.schedules.claimFire({
        scheduleId: schedule.id,
        scheduledAt: due,
        nextFireAt: plan.next,
        skipped: plan.skipped,
        fire: null,
      });
      this.logger.warn(
        { scheduleId: schedule.id, skipped: plan.skipped },
        "schedule's fires missed by more than an hour were skipped",
      );
      return false;
    }
    const agent = await this.agents.getAgent(schedule.accountId, schedule.agentId);
    if (!agent) {
      // Deleted: its purge removes its schedules; one created while it was being deleted goes here.
      await this.store.schedules.deleteSchedule(schedule.accountId, schedule.agentId, schedule.id);
      return false;
    }
    const firedAt = now.toISOString();
    const inactive = agent.status === AgentStatus.INACTIVE;
    const ids = { message: newId("message"), reply: newId("message") };
    const claimed = await this.store.schedules.claimFire({
      scheduleId: schedule.id,
      scheduledAt: due,
      nextFireAt: plan.next,
      skipped: plan.skipped,
      fire: {
        scheduledAt: plan.run,
        firedAt,
        messageId: inactive ? null : ids.reply,
        error: inactive
          ? { code: "AGENT_INACTIVE", message: "The agent was inactive at fire time; no message was sent." }
          : null,
      },
    });
    if (!claimed || inactive) return false;
    try {
      await this.runs.startBackground({
        accountId: schedule.accountId,
        agent,
        text: schedule.text,
        userId: schedule.userId ?? undefined,
        roomId: schedule.roomId ?? undefined,
        context: { schedule: { id: schedule.id, firedAt: plan.run } },
        ids,
      });
    } catch (error) {
      this.logger.error(
        { err: error, scheduleId: schedule.id },
        "schedule fired but its message was not started",
      );
      return false;
    }
    this.logger.info({ scheduleId: schedule.id, messageId: ids.reply, due: plan.run }, "schedule fired");
    return true;
  }

  private async pruneOnce(): Promise<void> {
    try {
      const before = new Date(Date.now() - FIRE_ROWS_KEPT_MS).toISOString();
      while ((await this.store.schedules.removeOldFires(before, 1000)) === 1000) {
        // Removed in batches so no one transaction holds the store for long.
      }
    } catch (error) {
      this.logger.warn({ err: error }, "could not remove old schedule fires");
    }
  }
}

/** The AgentDirectory of the registry's AgentService (a client of it): an agent it does not find is null. */
export function registryAgents(client: {
  getAgent(request: {
    accountId: string;
    id: string;
    view: AgentView;
  }): Promise<{ agent?: Agent | undefined }>;
}): AgentDirectory {
  return {
    async getAgent(accountId, agentId) {
      try {
        // The JSON view: a registry of the earlier release ignores it and answers the Struct form, read alike.
        return (
          readableAgent((await client.getAgent({ accountId, id: agentId, view: AgentView.JSON })).agent) ??
          null
        );
      } catch (error) {
        if (ConnectError.from(error).code === Code.NotFound) return null;
        throw error;
      }
    },
  };
}
