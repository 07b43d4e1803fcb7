import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError, answeredByService, type ErrorCode, fromConnectError } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import {
  type AccountService,
  type Agent,
  type AgentService,
  AgentSpecSchema,
  AgentStatus,
  AgentView,
  agentSpecJson,
  type ConversationService,
  type PluginService,
  StatusReasonSchema,
} from "@agentry/proto";
import { create, toJsonString } from "@bufbuild/protobuf";
import { timestampDate, timestampNow } from "@bufbuild/protobuf/wkt";
import { type Client, ConnectError } from "@connectrpc/connect";
import { type ClientConfig, PLATFORM_SECRETS, type Platform, runClients } from "./domain/clients.js";
import { BUDGET_SPENT, CLIENT_AUTH_FAILED, type ClientStatus } from "./domain/status.js";
import type { ConnectorMetrics } from "./metrics.js";
import type { Connector, PlatformDriver, TurnRequest } from "./platform.js";
import type { ConnectorStore } from "./store/types.js";

/** How long a turn's follower waits before following its run again, once the process it followed went away. */
const FOLLOW_AGAIN_MS = 1_000;
/**
 * Followings of one turn's run before it is given up: another conversation process takes a run over within 15 s of
 * its own dying, and generating it again may take the provider's whole time limit.
 */
const FOLLOW_ATTEMPTS = 120;

export interface SupervisorOptions {
  accounts: Client<typeof AccountService>;
  agents: Client<typeof AgentService>;
  secrets: Client<typeof PluginService>;
  conversations: Client<typeof ConversationService>;
  store: ConnectorStore;
  drivers: readonly PlatformDriver[];
  logger: Logger;
  /** This process, as lease holder. */
  holder: string;
  /** The gateway's public origin (PUBLIC_BASE_URL): platforms push webhook-mode updates under it. */
  publicBaseUrl?: string | undefined;
  /** How often agents are read again; a change takes effect within this (plus a stop). */
  syncIntervalMs?: number;
  rpcTimeoutMs?: number;
  metrics?: ConnectorMetrics;
}

interface Running {
  connector: Connector;
  platform: Platform;
  /** What the connector was started from: a change of any of it restarts the connector. */
  fingerprint: string;
  /** The agent's record as last read, for its turns. */
  agent: Agent;
}

const DEFAULT_SYNC_INTERVAL_MS = 2_000;
/**
 * A schedule's reply first seen later than this after its fire is left in history, not posted: a connector
 * started long after (or a service upgraded to post them) does not send old news.
 */
const SCHEDULED_REPLY_WINDOW_MS = 60 * 60 * 1000;
const PAGE_SIZE = 100;

/**
 * Keeps one connector running per agent and platform while the agent is active, lists the platform in `clients`
 * and holds the platform's secrets; stops it when any of these ends. It reads agents from the registry on a short
 * interval (and at once when `kick`ed), so deactivation, delete, a changed `clients` and a deleted secret all take
 * effect within seconds.
 */
export class ConnectorSupervisor {
  private readonly running = new Map<string, Running>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly options: SupervisorOptions) {}

  start(): void {
    const tick = () => {
      this.kick();
      if (!this.stopped)
        this.timer = setTimeout(tick, this.options.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS);
    };
    tick();
  }

  /** Reads agents again now (after an agent or secret change); a read in progress is followed by another. */
  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = this.sync()
      .catch((error: unknown) => {
        this.options.logger.warn(
          { err: error },
          "could not read agents for connectors; trying again shortly",
        );
      })
      .finally(() => {
        this.syncing = undefined;
        if (this.again) {
          this.again = false;
          void this.kick();
        }
      });
    return this.syncing;
  }

  /** The state of each of the agent's clients (the types its `clients` names), run here or not. */
  clients(agentId: string, types: readonly string[]): ClientStatus[] {
    return types.map((type) => {
      const running = this.running.get(`${agentId}:${type}`);
      if (running) return running.connector.status();
      const runnable = this.options.drivers.some((driver) => driver.type === type);
      return {
        type,
        state: runnable ? "stopped" : "inert",
        connectedAt: null,
        lastEventAt: null,
        lastError: null,
      };
    });
  }

  /** Hands a pushed update to the agent's connector; UNAUTHORIZED when none takes updates or the secret is wrong. */
  async deliver(type: string, agentId: string, secretToken: string, body: string): Promise<void> {
    const running = this.running.get(`${agentId}:${type}`);
    if (!running?.connector.receive) {
      throw new AppError("UNAUTHORIZED", `No ${type} connector of this agent takes pushed updates.`);
    }
    await running.connector.receive(secretToken, body);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.syncing;
    await Promise.all([...this.running.values()].map((running) => running.connector.stop()));
    this.running.clear();
  }

  private async sync(): Promise<void> {
    const { options } = this;
    const call = { timeoutMs: options.rpcTimeoutMs ?? 10_000 };
    const wanted = new Map<string, { agent: Agent; config: ClientConfig; secrets: Record<string, string> }>();
    const { accounts } = await options.accounts.listAccounts({}, call);
    for (const account of accounts) {
      for (let page = 1; ; page++) {
        // The JSON view costs the registry least; a registry of the earlier release answers the Struct form.
        const { agents, totalSize } = await options.agents.listAgents(
          { accountId: account.id, page, pageSize: PAGE_SIZE, view: AgentView.JSON },
          call,
        );
        for (const agent of agents) {
          // Read from their text (or a registry of the earlier release's Value); the agent goes on as it came.
          const { clients } = agentSpecJson(agent.spec);
          if (!runnable(agent)) continue;
          const configs = runClients(clients).filter((config) =>
            options.drivers.some((driver) => driver.type === config.type),
          );
          if (configs.length === 0) continue;
          const names = [...new Set(configs.flatMap((config) => PLATFORM_SECRETS[config.type]))];
          const { values } = await options.secrets.revealSecrets(
            { accountId: account.id, agentId: agent.id, names },
            call,
          );
          for (const config of configs) {
            const needed = PLATFORM_SECRETS[config.type];
            if (!needed.every((name) => values[name])) continue;
            const secrets = Object.fromEntries(needed.map((name) => [name, values[name] ?? ""]));
            wanted.set(`${agent.id}:${config.type}`, { agent, config, secrets });
          }
        }
        if (page * PAGE_SIZE >= totalSize || agents.length === 0) break;
      }
    }
    if (this.stopped) return;

    const stops: Promise<void>[] = [];
    for (const [key, running] of this.running) {
      const want = wanted.get(key);
      // A failed connector (its token rejected) runs again once the agent is changed, a PATCH to active included;
      // a running one goes on through the agent's own error → active, which its accepted token caused.
      const retry =
        running.connector.status().state === "failed" && want?.agent.status !== running.agent.status;
      if (want && fingerprintOf(want) === running.fingerprint && !retry) {
        running.agent = want.agent;
        continue;
      }
      this.running.delete(key);
      stops.push(running.connector.stop());
    }
    await Promise.all(stops);
    for (const [key, want] of wanted) {
      if (this.running.has(key)) continue;
      this.launch(key, want.agent, want.config, want.secrets);
    }
    await this.postScheduledReplies();
  }

  /**
   * Posts the replies of schedules whose `roomId` names a chat of one of the running connectors: each schedule's
   * last fire, once its message completed, goes to the chat once (claimed in the store under the reply's id, so
   * every process may look and one sends). Read on each sync; a failure is logged and tried on the next.
   */
  private async postScheduledReplies(): Promise<void> {
    const { conversations, logger } = this.options;
    const since = Date.now() - SCHEDULED_REPLY_WINDOW_MS;
    for (const running of [...this.running.values()]) {
      const { agent, connector, platform } = running;
      if (!connector.post || connector.status().state !== "connected") continue;
      try {
        for (let before = ""; ; ) {
          const { schedules, hasMore } = await conversations.listSchedules({
            accountId: agent.accountId,
            agentId: agent.id,
            page: { limit: 100, before },
          });
          for (const schedule of schedules) {
            const fire = schedule.lastFire;
            const messageId = fire?.messageId;
            if (!schedule.roomId?.startsWith(`${platform}:`) || fire?.status !== "completed" || !messageId)
              continue;
            if (!fire.fireTime || timestampDate(fire.fireTime).getTime() < since) continue;
            const messageKey = `schedule:${messageId}`;
            if (await this.options.store.answered(messageKey)) continue;
            const read = await conversations.getMessage({
              accountId: agent.accountId,
              agentId: agent.id,
              messageId,
            });
            const reply = read.background?.reply?.text ?? read.message?.text;
            if (!reply) continue;
            await connector.post(schedule.roomId, reply, messageKey);
            logger.info({ agentId: agent.id, scheduleId: schedule.id, messageId }, "schedule's reply posted");
          }
          const last = schedules.at(-1);
          if (!hasMore || !last) break;
          before = last.id;
        }
      } catch (error) {
        logger.warn(
          { err: error, agentId: agent.id },
          "could not post schedules' replies; trying again shortly",
        );
      }
    }
  }

  private launch(key: string, agent: Agent, config: ClientConfig, secrets: Record<string, string>): void {
    const { options } = this;
    const driver = options.drivers.find((candidate) => candidate.type === config.type);
    if (!driver) return;
    const logger = options.logger.child({ agentId: agent.id, client: config.type });
    const entry: Running = {
      agent,
      platform: config.type,
      fingerprint: fingerprintOf({ agent, config, secrets }),
      connector: undefined as unknown as Connector,
    };
    entry.connector = driver.start({
      agentId: agent.id,
      config,
      secrets,
      store: options.store,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      logger,
      holder: options.holder,
      webhookUrl: options.publicBaseUrl
        ? `${options.publicBaseUrl.replace(/\/+$/, "")}/v1/connectors/${config.type}/${agent.id}`
        : undefined,
      runTurn: (request) => this.runTurn(entry, config.type, request),
      authFailed: (message) => {
        logger.warn({ reason: message }, "platform rejected the agent's credentials; connector stopped");
        void this.reportHealth(entry.agent, message);
      },
      authAccepted: () => {
        if (entry.agent.statusReason?.code === CLIENT_AUTH_FAILED) void this.reportHealth(entry.agent, null);
      },
    });
    this.running.set(key, entry);
    logger.info("connector started");
  }

  private async runTurn(
    entry: Running,
    platform: Platform,
    request: TurnRequest,
  ): Promise<string | undefined> {
    const { agent } = entry;
    this.options.metrics?.messageReceived(platform);
    try {
      // A run with a lease (a background message): a conversation process that dies mid-turn has it taken over
      // by another, and the reply is read from whichever generates it.
      const { messageId } = await this.options.conversations.startMessage({
        accountId: agent.accountId,
        agent,
        text: request.text,
        userId: request.userId,
        roomId: request.roomId,
        context: { source: { ...request.source, platform } },
        // The platform message's key: a message read again after a restart finds its run, or its stored
        // exchange, instead of calling the model a second time.
        idempotencyKeyHash: createHash("sha256").update(request.messageKey).digest("hex"),
        // No gateway charged it: the conversation service reserves against the agent's and account's budgets.
        enforceBudgets: true,
      });
      return await this.turnReply(agent, messageId);
    } catch (error) {
      if (budgetSpent(error)) {
        // Refused before the model: the chat is told why, not given the apology for a failure.
        this.options.logger.info(
          { agentId: agent.id },
          "turn from a platform message refused: a budget is spent",
        );
        return BUDGET_SPENT;
      }
      // The conversation service recorded the failure (message.failed); the user gets one apology.
      this.options.logger.warn({ err: error, agentId: agent.id }, "turn from a platform message failed");
      this.options.metrics?.failed(platform, "turn");
      return undefined;
    }
  }

  /**
   * The reply of a turn's run, once it has ended, wherever it is generated: its events are followed to their end,
   * again after the conversation process answering went away. A run that ended failed throws its error; a run
   * whose events are gone (or a turn stored before turns were runs) is read from its stored reply.
   */
  private async turnReply(agent: Agent, messageId: string): Promise<string | undefined> {
    const { conversations } = this.options;
    const scope = { accountId: agent.accountId, agentId: agent.id, messageId };
    for (let attempt = 1; ; attempt += 1) {
      try {
        for await (const { event } of conversations.watchMessage({ ...scope, after: 0n, endOnly: true })) {
          if (event.case === "completed") return event.value.text;
          if (event.case === "failed") throw new AppError(event.value.code as ErrorCode, event.value.message);
        }
      } catch (error) {
        if (error instanceof AppError) throw error;
        const failure = ConnectError.from(error);
        if (answeredByService(failure)) {
          if (fromConnectError(failure).code !== "STREAM_NOT_FOUND") throw failure;
          const read = await conversations.getMessage(scope);
          return read.background?.reply?.text ?? read.message?.text;
        }
        if (attempt >= FOLLOW_ATTEMPTS) throw error;
      }
      await sleep(FOLLOW_AGAIN_MS);
    }
  }

  private async reportHealth(agent: Agent, failure: string | null): Promise<void> {
    try {
      const { agent: after } = await this.options.agents.reportAgentHealth({
        accountId: agent.accountId,
        id: agent.id,
        ...(failure
          ? {
              failure: create(StatusReasonSchema, {
                code: CLIENT_AUTH_FAILED,
                message: failure,
                time: timestampNow(),
              }),
            }
          : {}),
      });
      if (after) {
        for (const running of this.running.values()) if (running.agent.id === agent.id) running.agent = after;
      }
    } catch (error) {
      this.options.logger.warn({ err: error, agentId: agent.id }, "could not report the agent's health");
    }
  }
}

/**
 * Active agents run their connectors; so do agents in `error` for rejected credentials, whose connector is tried
 * again once the agent or its secret changes (the fingerprint).
 */
function runnable(agent: Agent): boolean {
  if (agent.status === AgentStatus.ACTIVE) return true;
  return agent.status === AgentStatus.ERROR && agent.statusReason?.code === CLIENT_AUTH_FAILED;
}

/** What a connector was started from; the agent's status is left out, as a restart on its own report would be. */
function fingerprintOf(want: {
  agent: Agent;
  config: ClientConfig;
  secrets: Record<string, string>;
}): string {
  const spec = want.agent.spec ? toJsonString(AgentSpecSchema, want.agent.spec) : "";
  return createHash("sha256")
    .update(JSON.stringify([want.config, want.secrets, spec]))
    .digest("hex");
}

/** Whether a turn was refused because a budget of its agent or account is spent. */
function budgetSpent(error: unknown): boolean {
  if (error instanceof AppError) return error.code === "BUDGET_EXCEEDED";
  const failure = ConnectError.from(error);
  return answeredByService(failure) && fromConnectError(failure).code === "BUDGET_EXCEEDED";
}
