import { newId } from "@agentry/core";
import { AppError } from "@agentry/errors";
import type { ConversationContext } from "./context.js";
import type { LoggedEvent } from "./runs.js";
import { conversationKey, type MessageInput, type ReplyRecord, replyOfTurn } from "./service.js";

/** The SHA-256 hex the gateway passes for a key. */
const KEY_HASH = /^[0-9a-f]{64}$/;

/** How a message with an Idempotency-Key is to be answered (`MessageKeys.begin`). */
type KeyedStart =
  | {
      kind: "new";
      /** The message with the ids its exchange will have. */
      input: MessageInput;
      /** Ends the claim on the key with the reply being generated, or with the failure that prevented it. */
      end(outcome: Promise<ReplyRecord> | AppError): void;
    }
  | {
      kind: "earlier";
      /** The reply's id, as soon as it is known. */
      id: Promise<string>;
      reply: Promise<ReplyRecord>;
    };

/**
 * Messages sent with an Idempotency-Key (the SHA-256 hex of the key, which the gateway passes; the key itself is
 * never seen here). The exchange a key's message stored is kept with the key (the store's `keyedExchange`) for the
 * key's life, in the transaction that stores it: a message sent again with its key (a client retrying after a
 * gateway stopped between the reply and its recording of the response) is answered with the stored reply, as the
 * first send answered it, and the model is not called. A stream replays the events of the first one's log while it
 * is kept, otherwise a started event, one delta with the whole text and the completed reply; a background message
 * answers the id of the first one's reply.
 *
 * A message sent again while its first send is still being answered by this process waits for that reply (a
 * background message answers its id at once). One answered by another process meanwhile is not seen until its
 * exchange is stored: both are generated, and the key stays with the first exchange stored.
 */
export class MessageKeys {
  /** Keyed messages being answered here, by account and key. */
  private readonly running = new Map<string, Running>();

  constructor(private readonly context: () => ConversationContext) {}

  private get ctx(): ConversationContext {
    return this.context();
  }

  /** Answers one message with its complete reply: `generate`d, or the reply of the earlier send with its key. */
  send(input: MessageInput, generate: (input: MessageInput) => Promise<ReplyRecord>): Promise<ReplyRecord> {
    return input.idempotencyKeyHash ? this.sendKeyed(input, generate) : generate(input);
  }

  /**
   * A streamed reply (MessageRuns.stream), or the events of the earlier send with the message's key: its log when
   * still kept, otherwise built from its reply.
   */
  stream(input: MessageInput, signal: AbortSignal, continued: boolean): AsyncIterable<LoggedEvent> {
    return input.idempotencyKeyHash
      ? this.streamKeyed(input, signal, continued)
      : this.ctx.runs.stream(input, signal, continued);
  }

  /** A background message (MessageRuns.startBackground), or the id of the earlier send with its key. */
  start(input: MessageInput): Promise<string> {
    return input.idempotencyKeyHash ? this.startKeyed(input) : this.ctx.runs.startBackground(input);
  }

  private async sendKeyed(
    input: MessageInput,
    generate: (input: MessageInput) => Promise<ReplyRecord>,
  ): Promise<ReplyRecord> {
    const start = await this.begin(input, false);
    if (start.kind === "earlier") return start.reply;
    const reply = generate(start.input);
    start.end(reply);
    return reply;
  }

  private async *streamKeyed(
    input: MessageInput,
    signal: AbortSignal,
    continued: boolean,
  ): AsyncGenerator<LoggedEvent> {
    const start = await this.begin(input, false);
    if (start.kind === "earlier") {
      yield* await this.replay(input.accountId, await start.reply, signal);
      return;
    }
    let failure: AppError | undefined;
    try {
      for await (const logged of this.ctx.runs.stream(start.input, signal, continued)) {
        // A stream without a log (MessageRuns' keepStreams false) ends the claim here.
        if (logged.event.type === "completed") start.end(Promise.resolve(logged.event.reply));
        yield logged;
      }
    } catch (error) {
      failure = asAppError(error);
      throw error;
    } finally {
      start.end(failure ?? new AppError("AGENT_UNAVAILABLE", "The caller went away."));
    }
  }

  private async startKeyed(input: MessageInput): Promise<string> {
    const start = await this.begin(input, true);
    if (start.kind === "earlier") return start.id;
    try {
      return await this.ctx.runs.startBackground(start.input);
    } catch (error) {
      start.end(asAppError(error));
      throw error;
    }
  }

  /** Told by MessageRuns of the reply a keyed message's run (`replyId`) will end with. */
  generating(input: MessageInput, replyId: string, reply: Promise<ReplyRecord>): void {
    if (!input.idempotencyKeyHash) return;
    const running = this.running.get(runningKey(input.accountId, input.idempotencyKeyHash));
    if (running?.id === replyId) running.link(reply);
  }

  /** Deletes at most `limit` keys expired at `now`; returns how many (the sweep of MessageRuns). */
  removeExpired(now: string, limit: number): Promise<number> {
    return this.ctx.store.removeExpiredKeys(now, limit);
  }

  /**
   * Claims the message's key in this process, then looks for the exchange stored with it. Throws
   * IDEMPOTENCY_KEY_REUSED when the key's earlier message was another one (agent, user, room or text).
   */
  private async begin(input: MessageInput, background: boolean): Promise<KeyedStart> {
    const hash = input.idempotencyKeyHash ?? "";
    if (!KEY_HASH.test(hash)) {
      throw new AppError("INVALID_REQUEST", "idempotency_key_hash must be a SHA-256 in hex.", {
        details: [{ field: "idempotency_key_hash", issue: "must be a SHA-256 in hex" }],
      });
    }
    const key = conversationKey(input);
    const request = { agentId: key.agentId, userId: key.userId, roomId: key.roomId, text: input.text };
    const name = runningKey(input.accountId, hash);
    const earlier = this.running.get(name);
    if (earlier) {
      if (!sameRequest(earlier.request, request)) throw reused();
      return {
        kind: "earlier",
        id: earlier.background ? Promise.resolve(earlier.id) : earlier.reply.then((reply) => reply.id),
        reply: earlier.reply,
      };
    }
    const ids = { message: newId("message"), reply: newId("message") };
    const running = new Running(ids.reply, background, request, () => {
      if (this.running.get(name) === running) this.running.delete(name);
    });
    this.running.set(name, running);
    let stored: ReplyRecord | null;
    try {
      stored = await this.storedReply(input, request);
    } catch (error) {
      running.link(asAppError(error));
      throw error;
    }
    if (stored) {
      running.link(Promise.resolve(stored));
      return { kind: "earlier", id: Promise.resolve(stored.id), reply: Promise.resolve(stored) };
    }
    return {
      kind: "new",
      input: { ...input, ids },
      end: (outcome) => running.link(outcome),
    };
  }

  /** The reply of the exchange stored with the message's key, as its send answered it; null when there is none. */
  private async storedReply(input: MessageInput, request: KeyedRequest): Promise<ReplyRecord | null> {
    const { store } = this.ctx;
    const keyed = await store.keyedExchange(
      input.accountId,
      input.idempotencyKeyHash!,
      new Date().toISOString(),
    );
    if (!keyed) return null;
    const [message, reply] = await Promise.all([
      store.getMessage(input.accountId, keyed.agentId, keyed.messageId),
      store.getMessage(input.accountId, keyed.agentId, keyed.replyId),
    ]);
    // Deleted with its conversation, agent or user (which take the key along): nothing to answer.
    if (!message || !reply) return null;
    const stored = {
      agentId: keyed.agentId,
      userId: message.userId,
      roomId: message.roomId,
      text: message.text,
    };
    if (!sameRequest(stored, request)) throw reused();
    // As the send answered it: the ids echoed as given, the fallback as the key kept it.
    return { ...replyOfTurn(reply), userId: input.userId, roomId: input.roomId, fallback: keyed.fallback };
  }

  /** A reply's stream again: its log's events while kept (and complete), otherwise built from the reply. */
  private async replay(accountId: string, reply: ReplyRecord, signal: AbortSignal): Promise<LoggedEvent[]> {
    const logged = await this.loggedEvents(accountId, reply, signal);
    if (logged) return logged;
    const events: LoggedEvent[] = [
      {
        seq: 1,
        event: {
          type: "started",
          messageId: reply.id,
          agentId: reply.agentId,
          userId: reply.userId,
          roomId: reply.roomId,
        },
      },
    ];
    if (reply.text !== "") events.push({ seq: 2, event: { type: "delta", text: reply.text } });
    events.push({ seq: events.length + 1, event: { type: "completed", reply } });
    return events;
  }

  private async loggedEvents(
    accountId: string,
    reply: ReplyRecord,
    signal: AbortSignal,
  ): Promise<LoggedEvent[] | null> {
    let events: AsyncIterable<LoggedEvent>;
    try {
      events = await this.ctx.runs.follow({ accountId, agentId: reply.agentId }, reply.id, 0, false, signal);
    } catch (error) {
      if (error instanceof AppError && error.code === "STREAM_NOT_FOUND") return null;
      throw error;
    }
    const logged: LoggedEvent[] = [];
    for await (const event of events) logged.push(event);
    // A log that ended otherwise (its process stopped after the exchange was stored) does not tell the reply.
    return logged.at(-1)?.event.type === "completed" ? logged : null;
  }
}

/** What makes a message the same one for its key. */
interface KeyedRequest {
  agentId: string;
  userId: string;
  roomId: string;
  text: string;
}

/** A keyed message being answered here: its reply's id, and the reply once it is settled. */
class Running {
  readonly reply: Promise<ReplyRecord>;
  private settle!: { resolve(reply: ReplyRecord): void; reject(error: unknown): void };
  private linked = false;

  constructor(
    readonly id: string,
    readonly background: boolean,
    readonly request: KeyedRequest,
    private readonly ended: () => void,
  ) {
    this.reply = new Promise<ReplyRecord>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Only the messages sent again meanwhile wait for it; its failure is their own to handle.
    this.reply.catch(() => undefined);
  }

  /** Settles the reply with `outcome` (the first one given wins) and ends the claim once it is settled. */
  link(outcome: Promise<ReplyRecord> | AppError): void {
    if (this.linked) return;
    this.linked = true;
    if (outcome instanceof AppError) {
      this.settle.reject(outcome);
      this.ended();
      return;
    }
    outcome.then(this.settle.resolve, this.settle.reject).finally(this.ended);
  }
}

function runningKey(accountId: string, hash: string): string {
  return `${accountId}\n${hash}`;
}

function sameRequest(a: KeyedRequest, b: KeyedRequest): boolean {
  return a.agentId === b.agentId && a.userId === b.userId && a.roomId === b.roomId && a.text === b.text;
}

function reused(): AppError {
  return new AppError(
    "IDEMPOTENCY_KEY_REUSED",
    "This Idempotency-Key was used with a different message; use a new key for a new message.",
  );
}

function asAppError(error: unknown): AppError {
  return error instanceof AppError
    ? error
    : new AppError("INTERNAL_ERROR", "Internal error.", { cause: error });
}
