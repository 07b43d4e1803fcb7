import { ErrorCode, type WebAPIHTTPError, type WebAPIPlatformError, type WebClient } from "@slack/web-api";
import type { Delivery } from "../delivery.js";
import { markdownToSlack } from "../format/slack.js";

/** Slack's own errors that mean "try again later", not "never". */
const TRANSIENT = new Set([
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
  "ratelimited",
]);

/**
 * How a reply goes out on Slack: each message as mrkdwn (converted from the model's Markdown) in the message's
 * thread, or, where conversion fails, the model's own text with formatting off.
 */
export function slackReply(
  client: WebClient,
  where: { channel: string; thread: string | undefined; ts: string },
): Pick<Delivery, "send" | "classify" | "writtenAt"> {
  return { ...slackPost(client, where.channel, where.thread), writtenAt: Number(where.ts) * 1000 };
}

/** How a message goes out to a Slack channel, in `thread` when given. */
export function slackPost(
  client: WebClient,
  channel: string,
  thread: string | undefined,
): Pick<Delivery, "send" | "classify"> {
  return {
    async send(piece) {
      const formatted = markdownToSlack(piece);
      await client.chat.postMessage({
        channel,
        text: formatted ?? piece,
        ...(formatted === undefined ? { mrkdwn: false } : {}),
        ...(thread ? { thread_ts: thread } : {}),
      });
    },
    classify(error) {
      const code = (error as { code?: string }).code;
      if (code === ErrorCode.PlatformError) {
        return TRANSIENT.has((error as WebAPIPlatformError).data.error) ? "refused-retryable" : "refused";
      }
      if (code === ErrorCode.HTTPError) {
        return (error as WebAPIHTTPError).statusCode >= 500 ? "refused-retryable" : "refused";
      }
      if (code === ErrorCode.RateLimitedError) return "refused-retryable";
      return "unknown";
    },
  };
}

/**
 * Slack's "is thinking…" under the message while the reply is generated (`assistant.threads.setStatus`, which
 * takes the bot's `chat:write` scope in channels and DMs alike). It shows in a thread, so only threaded replies
 * get it; Slack clears it when the reply is posted, or after two minutes. A failure only costs the indicator.
 */
export function showThinking(client: WebClient, channel: string, thread: string | undefined): void {
  if (!thread) return;
  client.assistant.threads
    .setStatus({ channel_id: channel, thread_ts: thread, status: "is thinking…" })
    .catch(() => {});
}
