import type { Platform } from "./domain/clients.js";
import { MESSAGE_LIMITS, splitReply } from "./domain/split.js";
import { APOLOGY } from "./domain/status.js";
import type { ConnectorContext } from "./platform.js";

/** What happened to one message's send, as the platform's client reported it. */
export type SendFailure =
  /** The platform answered and refused it (or timed out asking to be retried): nothing of it was shown. */
  | "refused-retryable"
  /** The platform refused it for good (blocked bot, gone chat): trying again would fail again. */
  | "refused"
  /** No answer (connection lost, timeout): the platform may or may not have taken it. */
  | "unknown";

export interface Delivery {
  platform: Platform;
  /** The platform message's key, as given to the turn. */
  messageKey: string;
  /** When the platform says the message was written, in ms since the epoch: the reply's lag is counted from it. */
  writtenAt: number;
  /** The model's reply in Markdown; undefined when the turn failed (the apology is sent instead). */
  reply: string | undefined;
  /** Sends one message of the reply (at most the platform's limit, in Markdown) and resolves once it is accepted. */
  send(piece: string): Promise<void>;
  /** How the platform's client failed, for what may be retried. */
  classify(error: unknown): SendFailure;
}

/**
 * Posts a turn's reply, at most once across every process sharing the store.
 *
 * The answer is claimed in the store before the first message is sent, so a Slack retry handled by another process,
 * or a Telegram update read again after a crash, finds it claimed and sends nothing. What this leaves:
 * - a crash (or lost connection) after the claim and before the platform accepted the message loses that reply:
 *   neither Telegram nor Slack takes an idempotency key for a message, so a send whose outcome is unknown is never
 *   repeated (at most once, never twice);
 * - a reply the platform explicitly refused before any of it was shown is unclaimed again and the error thrown, so
 *   the message is answered when it comes again (Telegram's next poll, Slack's retry): at least once for those.
 *
 * Resolves once the reply is out or given up; throws only when the message should be tried again.
 */
export async function deliverReply(context: ConnectorContext, delivery: Delivery): Promise<void> {
  const { platform, messageKey } = delivery;
  const metrics = context.metrics;
  if (!(await context.store.markAnswered(messageKey, context.agentId))) return;
  const pieces = splitReply(delivery.reply ?? APOLOGY, MESSAGE_LIMITS[platform]);
  let sent = 0;
  try {
    for (const piece of pieces) {
      await delivery.send(piece);
      sent++;
    }
  } catch (error) {
    metrics?.failed(platform, "send");
    const failure = delivery.classify(error);
    if (sent === 0 && failure === "refused-retryable") {
      await context.store.releaseAnswered(messageKey);
      throw error;
    }
    context.logger.warn(
      { err: error, messageKey, sent, of: pieces.length, failure },
      failure === "unknown"
        ? "reply's send went unanswered; not sent again, so it is never shown twice"
        : "platform refused the reply; not sent again",
    );
    return;
  }
  metrics?.replySent(platform, (Date.now() - delivery.writtenAt) / 1000);
}
