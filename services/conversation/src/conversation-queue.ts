import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  CONFLICT_MODES,
  type ConflictMode,
  DEFAULT_CONFLICT_MODE,
  type Repetition,
  repeatEvery,
} from "@agentry/core";
import { AppError, invalid } from "@agentry/errors";
import type { Logger } from "@agentry/logging";
import type { JsonObject } from "@bufbuild/protobuf";
import type { ConversationKey, ConversationStore, QueueEntry, QueueJoin } from "./store/types.js";

/** How often a process renews its places in line and looks for those a later message interrupted. */
const TICK_MS = 250;

/**
 * The abort reason of a message interrupted by a later one: it ends with the text it had, stored as a reply whose
 * finish reason is `cancelled` (service.ts).
 */
export class Interrupted extends Error {
  constructor() {
    super("interrupted by a later message to the conversation");
    this.name = "Interrupted";
  }
}

export function isInterrupted(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof Interrupted;
}

/**
 * A message's mode: the send's `onConflict`, else the agent's `settings.concurrentMessages`, else `enqueue`. A
 * value outside CONFLICT_MODES is INVALID_REQUEST (the gateway refuses both before they come here).
 */
export function conflictMode(onConflict: string | undefined, settings: JsonObject | undefined): ConflictMode {
  if (onConflict !== undefined && onConflict !== "") {
    if (!(CONFLICT_MODES as readonly string[]).includes(onConflict)) {
      throw invalid("on_conflict", `must be one of ${CONFLICT_MODES.join(", ")}`);
    }
    return onConflict as ConflictMode;
  }
  const setting = settings?.concurrentMessages;
  return typeof setting === "string" && (CONFLICT_MODES as readonly string[]).includes(setting)
    ? (setting as ConflictMode)
    : DEFAULT_CONFLICT_MODE;
}

export interface QueueOptions {
  /** How long a place lasts unless its process renews it (RUN_LEASE_MS). */
  leaseMs: number;
  /** How often a waiting message asks whether its turn has come. */
  pollMs: number;
}

/**
 * The conversations' lines: one message of a conversation (agent, user, room) is answered at a time, in the order
 * they came, across every process sharing the store. Each message takes a place in the store's line before it is
 * answered (`join`), waits until no place is before it (`Place.admitted`), and leaves once it has ended. Places
 * hold a lease as runs do: a process renews its own every TICK_MS; the place of a process that died expires and
 * is passed over. A message joined with `interrupt` marks the places before it interrupted: their process, here
 * at once or elsewhere at its next tick, cancels them, and they end with the text they had. Each place has an
 * owner token of its own: of two attempts at one message (one id), only the one that owns the place leaves it.
 */
export class ConversationQueue {
  /** By owner token: two attempts at one message may both be here. */
  private readonly places = new Map<string, Place>();
  private tick: Repetition | undefined;

  constructor(
    private readonly store: ConversationStore,
    private readonly logger: Logger,
    private readonly holder: string,
    private readonly options: QueueOptions,
  ) {}

  start(): void {
    this.tick ??= repeatEvery(TICK_MS, () => this.renewOnce());
  }

  async close(): Promise<void> {
    await this.tick?.stop();
  }

  /**
   * Takes the message's place in its conversation's line (`id` the reply's); CONVERSATION_BUSY when `mode` is
   * reject and the line is not empty. `takeover`: this process holds the message's run, taken over from one that
   * stopped, and takes its place.
   */
  async join(id: string, key: ConversationKey, mode: ConflictMode, takeover = false): Promise<Place> {
    const place = new Place(this, id, key);
    this.places.set(place.owner, place);
    let joined: QueueJoin;
    try {
      joined = await this.store.joinConversation(
        { ...this.entry(place), ...(takeover ? { takeover } : {}) },
        mode,
        new Date().toISOString(),
      );
    } catch (error) {
      this.places.delete(place.owner);
      throw error;
    }
    if (joined === "refused") {
      this.places.delete(place.owner);
      throw new AppError(
        "CONVERSATION_BUSY",
        "The conversation has a message in progress. Send this one again once it has ended, or send it with " +
          'onConflict "enqueue" (to be answered after it) or "interrupt" (to cancel it).',
      );
    }
    if (mode === "interrupt") {
      for (const other of this.places.values()) {
        if (other !== place && sameConversation(other.key, key)) other.interrupt();
      }
    }
    if (joined === "admitted") place.admittedOnJoining = true;
    return place;
  }

  /**
   * A place outside any line: for a message whose caller supplies its whole conversation (the OpenAI-compatible
   * route), which reads no stored history, so that no order of the stored conversation matters to it.
   */
  outOfLine(id: string, key: ConversationKey): Place {
    return new Place(this, id, key, false);
  }

  /** @internal A place's entry as its holder writes it now. */
  entry(place: Place): QueueEntry {
    const now = Date.now();
    return {
      id: place.id,
      key: place.key,
      holder: this.holder,
      owner: place.owner,
      expiresAt: new Date(now + this.options.leaseMs).toISOString(),
      createdAt: new Date(now).toISOString(),
    };
  }

  /** @internal */
  async waitForTurn(place: Place, signal: AbortSignal): Promise<void> {
    for (;;) {
      const turn = await this.store.admitTurn(place.id, new Date().toISOString());
      if (turn === "admitted") return;
      // Dropped as expired (this process was paused past the lease): it joins again, at the end.
      if (
        turn === "gone" &&
        (await this.store.joinConversation(this.entry(place), "enqueue", new Date().toISOString())) ===
          "admitted"
      )
        return;
      if (signal.aborted) throw signal.reason;
      await Promise.race([
        sleep(this.options.pollMs, undefined, { signal }).catch(() => undefined),
        place.nudged(),
      ]);
      if (signal.aborted) throw signal.reason;
    }
  }

  /** @internal `stored`: the place was left in the transaction that stored the message's exchange. */
  async leave(place: Place, stored: boolean): Promise<void> {
    this.places.delete(place.owner);
    try {
      if (!stored) await this.store.leaveConversation(place.id, place.owner);
    } catch (error) {
      // Its lease then expires, and the next message goes.
      this.logger.warn({ err: error, messageId: place.id }, "could not leave the conversation's line");
    }
    for (const other of this.places.values()) {
      if (sameConversation(other.key, place.key)) other.nudge();
    }
  }

  private async renewOnce(): Promise<void> {
    const ids = [...new Set([...this.places.values()].map((place) => place.id))];
    if (ids.length === 0) return;
    try {
      const until = new Date(Date.now() + this.options.leaseMs).toISOString();
      const interrupted = new Set<string>();
      for (const renewal of await this.store.renewQueue(this.holder, ids, until)) {
        if (renewal.interrupted) interrupted.add(renewal.id);
      }
      for (const place of this.places.values()) {
        if (interrupted.has(place.id)) place.interrupt();
      }
    } catch (error) {
      this.logger.warn(
        { err: error },
        "could not renew the places of messages in their conversations' lines",
      );
    }
  }
}

/** One message's place in its conversation's line. */
export class Place {
  private readonly controller = new AbortController();
  private wake: (() => void) | null = null;
  private left: Promise<void> | null = null;
  /** Set once the exchange's transaction has left the place (`leaving`). */
  private stored = false;
  /** This attempt's token (QueueEntry.owner): the place is left by its owner only. */
  readonly owner = randomUUID();
  /** @internal Admitted by the join itself: the first wait asks the store nothing. */
  admittedOnJoining = false;

  constructor(
    private readonly queue: ConversationQueue,
    readonly id: string,
    readonly key: ConversationKey,
    /** false: a message that waits for nobody and nobody waits for (`ConversationQueue.outOfLine`). */
    private readonly inLine = true,
  ) {}

  /** Aborted (with an Interrupted reason) once a later message interrupts this one. */
  get interruption(): AbortSignal {
    return this.controller.signal;
  }

  /** Resolves once no message of the conversation is before this one; throws `signal`'s reason if it aborts. */
  admitted(signal: AbortSignal): Promise<void> {
    if (!this.inLine) return Promise.resolve();
    if (this.admittedOnJoining) {
      this.admittedOnJoining = false;
      return Promise.resolve();
    }
    return this.queue.waitForTurn(this, AbortSignal.any([signal, this.controller.signal]));
  }

  /**
   * The place as the store's `saveExchange` leaves it with the exchange (`NewExchange.leaves`); undefined for a
   * message outside any line, or one that has left. Call `leftWithExchange` once the exchange is stored.
   */
  leaving(): { id: string; owner: string } | undefined {
    return this.inLine && this.left === null ? { id: this.id, owner: this.owner } : undefined;
  }

  /** Notes that the place was left in the transaction that stored the exchange: `leave` writes nothing more. */
  leftWithExchange(): void {
    this.stored = true;
  }

  /** Leaves the line, once. */
  leave(): Promise<void> {
    if (!this.inLine) return Promise.resolve();
    this.left ??= this.queue.leave(this, this.stored);
    return this.left;
  }

  interrupt(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new Interrupted());
  }

  /** @internal Resolves when a message of the conversation leaves the line here. */
  nudged(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  /** @internal */
  nudge(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

function sameConversation(a: ConversationKey, b: ConversationKey): boolean {
  return (
    a.accountId === b.accountId && a.agentId === b.agentId && a.userId === b.userId && a.roomId === b.roomId
  );
}
