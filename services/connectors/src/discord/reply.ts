import { DiscordAPIError, HTTPError, type Message, RateLimitError } from "discord.js";
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
    classify(error) {
      if (error instanceof RateLimitError) return "refused-retryable";
      if (error instanceof DiscordAPIError || error instanceof HTTPError) {
        return error.status === 429 || error.status >= 500 ? "refused-retryable" : "refused";
      }
      return "unknown";
    },
  };
}
