import { type Api, GrammyError } from "grammy";
import type { Message } from "grammy/types";
import type { Delivery } from "../delivery.js";
import { markdownToTelegramHtml } from "../format/telegram.js";

/**
 * How a reply goes out on Telegram: each message in HTML parse mode, as a reply to `message`; a message whose markup
 * Telegram refuses (400, "can't parse entities") is sent again as the plain text the model wrote.
 */
export function telegramReply(api: Api, message: Message): Pick<Delivery, "send" | "classify" | "writtenAt"> {
  const options = {
    reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true },
  };
  return {
    writtenAt: message.date * 1000,
    async send(piece) {
      try {
        await api.sendMessage(message.chat.id, markdownToTelegramHtml(piece), {
          ...options,
          parse_mode: "HTML",
        });
      } catch (error) {
        if (!(error instanceof GrammyError && error.error_code === 400)) throw error;
        await api.sendMessage(message.chat.id, piece, options);
      }
    },
    classify(error) {
      if (!(error instanceof GrammyError)) return "unknown";
      return error.error_code === 429 || error.error_code >= 500 ? "refused-retryable" : "refused";
    },
  };
}
