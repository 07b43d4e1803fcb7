import { DiscordAPIError, HTTPError, type Message, RateLimitError, type REST, Routes } from "discord.js";
import type { Delivery } from "../delivery.js";

/**
 * How a reply goes out on Discord: each message as a reply to `message` in its channel, without pinging its author a
 * second time. Discord renders the model's Markdown itself, so the text is sent as written.
 */
export function discordReply(message: Message): Pick<Delivery, "send" | "classify" | "writtenAt"> {
  return {
    writtenAt: message.createdTimestamp,
    async send(piece) {
      await message.reply({
        content: piece,
        allowedMentions: { repliedUser: false, parse: [] },
        failIfNotExists: false,
      });
    },
    classify: classifyDiscord,
  };
}

/**
 * How a message goes out to a Discord channel through `rest` (a schedule's reply: it answers no message). No one
 * it names is pinged.
 */
export function discordPost(rest: REST, channelId: string): Pick<Delivery, "send" | "classify"> {
  return {
    async send(piece) {
      await rest.post(Routes.channelMessages(channelId), {
        body: { content: piece, allowed_mentions: { parse: [] } },
      });
    },
    classify: classifyDiscord,
  };
}

function classifyDiscord(error: unknown): ReturnType<Delivery["classify"]> {
  if (error instanceof RateLimitError) return "refused-retryable";
  if (error instanceof DiscordAPIError || error instanceof HTTPError) {
    return error.status === 429 || error.status >= 500 ? "refused-retryable" : "refused";
  }
  return "unknown";
}
