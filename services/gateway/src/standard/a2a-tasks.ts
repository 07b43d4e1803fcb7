import { setTimeout as sleep } from "node:timers/promises";
import { type ListTasksRequest, type ListTasksResponse, Task, TaskState } from "@a2a-js/sdk";
import { InMemoryTaskStore, type ServerCallContext, type TaskStore } from "@a2a-js/sdk/server";
import { commonJsExports } from "@agentry/core";
import type { Availability } from "@agentry/logging";
import type { createClient } from "redis";

/** How long a task is kept after its last change: `tasks/get` answers TaskNotFound for it afterwards. */
export const A2A_TASK_TTL_MS = 24 * 60 * 60 * 1000;

/** Whose tasks a call reads and writes: the account and agent of the caller (the A2A user's name). */
export function taskOwner(context: ServerCallContext): string {
  return context.user?.userName || "unknown";
}

type Client = ReturnType<typeof createClient>;

/**
 * Writes a task unless it has already ended in another state (an ended task never changes again), so a cancel
 * recorded by one gateway is not overwritten by the gateway still running the task, and a cancel that comes
 * after the task completed is refused. A newly cancelled task is announced to every gateway.
 * KEYS: task hash, owner's index. ARGV: task JSON, state, TTL ms, cancel channel, cancel message, task id.
 */
const SAVE = `
local current = redis.call('HGET', KEYS[1], 'state')
local terminal = { ['${TaskState.TASK_STATE_COMPLETED}'] = true, ['${TaskState.TASK_STATE_FAILED}'] = true,
  ['${TaskState.TASK_STATE_CANCELED}'] = true, ['${TaskState.TASK_STATE_REJECTED}'] = true }
if current and terminal[current] and current ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'task', ARGV[1], 'state', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
if ARGV[2] == '${TaskState.TASK_STATE_CANCELED}' and current ~= ARGV[2] then
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
return 1
`;

export interface RedisTaskStoreOptions {
  url: string;
  /** Prepended to every key and channel (default `agentry:a2a:`). */
  keyPrefix?: string;
  ttlMs?: number;
  /** Told whether Redis answers (an outage log fits). */
  availability?: Availability;
}

/**
 * A2A tasks in the Redis the gateways share, so any gateway answers `tasks/get`, `tasks/list` and `tasks/cancel`
 * for a task another ran, and tasks outlive a restart. Each task is one hash under its owner (account and agent),
 * kept for `ttlMs` after its last change; a cancel is published so the gateway running the task aborts it.
 */
export class RedisTaskStore implements TaskStore {
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly clients: Promise<{ client: Client; subscriber: Client } | undefined>;
  private readonly listeners = new Set<(owner: string, taskId: string) => void>();
  private closed = false;
  /** Settles when the client is first ready: until then a call waits for it, briefly, instead of failing. */
  private readonly firstReady: Promise<void>;
  private markReady: () => void = () => {};

  constructor(options: RedisTaskStoreOptions) {
    this.prefix = options.keyPrefix ?? "agentry:a2a:";
    this.ttlMs = options.ttlMs ?? A2A_TASK_TTL_MS;
    const availability = options.availability;
    // Connects in the background (retrying forever), so a gateway can start before its Redis does; until it
    // answers, calls fail at once instead of waiting.
    this.firstReady = new Promise((resolve) => {
      this.markReady = resolve;
    });
    this.clients = import("redis").then(commonJsExports).then(({ createClient }) => {
      if (this.closed) return undefined;
      const client: Client = createClient({
        url: options.url,
        disableOfflineQueue: true,
        socket: {
          connectTimeout: 2000,
          reconnectStrategy: (retries) => Math.min(50 * 2 ** Math.min(retries, 16), 2000),
        },
      });
      // node-redis emits every connection failure as 'error'; an EventEmitter without a listener would crash.
      client.on("error", (error: Error) => availability?.failed(error));
      client.on("ready", () => {
        this.markReady();
        availability?.recovered();
      });
      // The subscription waits for the connection, and is made again on every reconnection.
      const subscriber: Client = createClient({
        url: options.url,
        socket: { reconnectStrategy: (retries) => Math.min(50 * 2 ** Math.min(retries, 16), 2000) },
      });
      subscriber.on("error", (error: Error) => availability?.failed(error));
      const failed = (error: unknown) =>
        availability?.failed(error instanceof Error ? error : new Error(String(error)));
      client.connect().catch(failed);
      subscriber.connect().catch(failed);
      subscriber
        .subscribe(this.channel, (message) => {
          const split = message.lastIndexOf("\n");
          for (const listener of this.listeners) listener(message.slice(0, split), message.slice(split + 1));
        })
        .catch(failed);
      return { client, subscriber };
    });
    // Loading the client cannot fail but for a broken install; unobserved, it would end the process.
    this.clients.catch(() => undefined);
  }

  private get channel(): string {
    return `${this.prefix}cancel`;
  }

  private taskKey(owner: string, taskId: string): string {
    return `${this.prefix}task:${owner}:${taskId}`;
  }

  private indexKey(owner: string): string {
    return `${this.prefix}tasks:${owner}`;
  }

  private async client(): Promise<Client> {
    const clients = await this.clients;
    if (!clients) throw new Error("The A2A task store is closed.");
    if (!clients.client.isReady) await Promise.race([this.firstReady, sleep(2000)]);
    return clients.client;
  }

  /** Called with the owner and id of each task cancelled on any gateway. */
  onCancel(listener: (owner: string, taskId: string) => void): void {
    this.listeners.add(listener);
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const owner = taskOwner(context);
    const client = await this.client();
    await client.eval(SAVE, {
      keys: [this.taskKey(owner, task.id), this.indexKey(owner)],
      arguments: [
        JSON.stringify(Task.toJSON(task)),
        String(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED),
        String(this.ttlMs),
        this.channel,
        `${owner}\n${task.id}`,
        task.id,
      ],
    });
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const client = await this.client();
    const json = await client.hGet(this.taskKey(taskOwner(context), taskId), "task");
    return json ? Task.fromJSON(JSON.parse(json)) : undefined;
  }

  /** The owner's tasks, filtered and paged as the SDK's in-memory store does (it is given them to do it). */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const owner = taskOwner(context);
    const client = await this.client();
    const ids = await client.sMembers(this.indexKey(owner));
    const page = new InMemoryTaskStore(taskOwner);
    const expired: string[] = [];
    for (const id of ids) {
      const task = await this.load(id, context);
      if (task) await page.save(task, context);
      else expired.push(id);
    }
    if (expired.length > 0) await client.sRem(this.indexKey(owner), expired);
    return page.list(params, context);
  }

  async close(): Promise<void> {
    this.closed = true;
    const clients = await this.clients.catch(() => undefined);
    for (const client of [clients?.client, clients?.subscriber]) {
      // close() waits for pending replies, which a hung server never sends.
      if (client?.isReady) await Promise.race([client.close(), sleep(1000)]).catch(() => {});
      if (client?.isOpen) client.destroy();
    }
  }
}
