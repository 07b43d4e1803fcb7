import { newId, type Repetition, repeatEvery } from "@agentry/core";
import { AppError, asAppError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import { type Agent, AgentStatus, AgentView } from "@agentry/proto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Cron } from "croner";
import { DEFAULT_LEASE_MS, type MessageRuns } from "./message-runs.js";
import type { ConversationStore, ScheduleRecord, UnstartedFire } from "./store/types.js";

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

/** A fire's error when its agent was inactive at fire time. */
const INACTIVE = {
  code: "AGENT_INACTIVE",
  message: "The agent was inactive at fire time; no message was sent.",
};
/** A fire's error when its claimer stopped before sending it and no process could within CATCH_UP_MS. */
const NOT_STARTED_IN_TIME = {
  code: "AGENT_UNAVAILABLE",
  message:
    "The process that claimed this fire stopped before sending its message, and none sent it within 1 h of its time.",
};

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
  /**
   * How long a process that claimed a fire has to start its message before another process may (RUN_LEASE_MS:
   * starting it takes milliseconds; a process still not done by then has stopped, or stalled as long as a run's
   * lease allows).
   */
  startWithinMs?: number;
}

/**
 * Runs the fires of every schedule in the store: every `scanMs` each process reads the due schedules and claims
 * each fire (`claimFire`: one conditional update and the fire's unique row, in one transaction), so that any
 * number of processes sharing the store run each fire once. The claim records the ids of the fire's message and
 * until when the claimer has to start it (`startWithinMs`); the claimer then starts the fire's background message
 * (a durable run, taken over by another process if this one stops) and notes it started. A claimer that stopped
 * in between leaves a fire not started past its time: the scan of any process takes its start over with one
 * conditional update (`reclaimFire`), and starts the message under the recorded ids unless its run or reply
 * exists already (the claimer stopped after starting it). Recorded under the same id, the message's run is stored
 * once whoever starts it, so a fire never sends two; its place in the conversation's line is that of the attempt
 * whose run was recorded (conversation-queue.ts), so a claimer that only stalled leaves nothing of the sender's.
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

  /** Claims and runs the fires due now, and starts those whose claimer stopped first; how many this process ran. */
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
    try {
      for (const fire of await this.store.schedules.unstartedFires(new Date().toISOString(), PAGE)) {
        if (await this.restart(fire)) ran += 1;
      }
    } catch (error) {
      this.logger.warn({ err: error }, "could not look for schedule fires left unstarted");
    }
    return ran;
  }

  private startBy(): string {
    return new Date(Date.now() + (this.options.startWithinMs ?? DEFAULT_LEASE_MS)).toISOString();
  }

  /**
   * Starts a fire claimed by a process that did not start it in time (it stopped), unless another process takes
   * it first, its message exists already, or it is more than CATCH_UP_MS late (then it is not sent, and says so).
   */
  private async restart(fire: UnstartedFire): Promise<boolean> {
    const schedules = this.store.schedules;
    if (Date.now() - Date.parse(fire.scheduledAt) >= CATCH_UP_MS) {
      await schedules.settleFire(fire.scheduleId, fire.scheduledAt, NOT_STARTED_IN_TIME);
      this.logger.warn(
        { scheduleId: fire.scheduleId, due: fire.scheduledAt },
        "schedule fire not sent in time; skipped",
      );
      return false;
    }
    if (!(await schedules.reclaimFire(fire, this.startBy()))) return false;
    const { accountId, agentId } = fire;
    const started =
      (await this.store.getRun(accountId, agentId, fire.messageId)) ??
      (await this.store.getMessage(accountId, agentId, fire.messageId));
    const schedule = started ? null : await schedules.getSchedule(accountId, agentId, fire.scheduleId);
    if (!schedule) {
      // Started before its claimer stopped, or the schedule is gone (its fires with it).
      await schedules.settleFire(fire.scheduleId, fire.scheduledAt, null);
      return false;
    }
    const agent = await this.agents.getAgent(accountId, agentId);
    if (!agent || agent.status === AgentStatus.INACTIVE) {
      await schedules.settleFire(fire.scheduleId, fire.scheduledAt, agent ? INACTIVE : null);
      return false;
    }
    const ids = { message: fire.userMessageId, reply: fire.messageId };
    const sent = await this.send(schedule, agent, fire.scheduledAt, ids);
    if (sent) {
      this.logger.info(
        { scheduleId: schedule.id, messageId: ids.reply, due: fire.scheduledAt },
        "schedule fire sent in place of the process that claimed it",
      );
    }
    return sent;
  }

  /**
   * Starts a claimed fire's message and notes it started; false when it was not. A failure the same message would
   * meet again (the conversation busy and rejecting it) ends the fire with that error; any other (the store out of
   * reach, or the message recorded by another process meanwhile) leaves the fire to the next process whose scan
   * finds it not started.
   */
  private async send(
    schedule: ScheduleRecord,
    agent: Agent,
    scheduledAt: string,
    ids: { message: string; reply: string },
  ): Promise<boolean> {
    try {
      await this.runs.startBackground({
        accountId: schedule.accountId,
        agent,
        text: schedule.text,
        userId: schedule.userId ?? undefined,
        roomId: schedule.roomId ?? undefined,
        context: { schedule: { id: schedule.id, firedAt: scheduledAt } },
        // No gateway charged it: its budgets are reserved against here (refused: the fire fails BUDGET_EXCEEDED).
        enforceBudgets: true,
        ids,
      });
    } catch (error) {
      const failure = asAppError(error);
      this.logger.error(
        { err: error, scheduleId: schedule.id, code: failure.code },
        "schedule fired but its message was not started",
      );
      if (failure.code !== "AGENT_UNAVAILABLE" && failure.code !== "INTERNAL_ERROR") {
        await this.store.schedules
          .settleFire(schedule.id, scheduledAt, { code: failure.code, message: failure.message })
          .catch(() => undefined);
      }
      return false;
    }
    try {
      await this.store.schedules.settleFire(schedule.id, scheduledAt, null);
    } catch (error) {
      // Left not started: the process that finds it so finds its run, and notes it started.
      this.logger.warn({ err: error, scheduleId: schedule.id }, "could not note a schedule fire started");
    }
    return true;
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
        userMessageId: inactive ? null : ids.message,
        startBy: inactive ? null : this.startBy(),
        error: inactive ? INACTIVE : null,
      },
    });
    if (!claimed || inactive) return false;
    if (!(await this.send(schedule, agent, plan.run, ids))) return false;
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
        return (await client.getAgent({ accountId, id: agentId, view: AgentView.JSON })).agent ?? null;
      } catch (error) {
        if (ConnectError.from(error).code === Code.NotFound) return null;
        throw error;
      }
    },
  };
}
