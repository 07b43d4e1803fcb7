import { type Api, GrammyError } from "grammy";
import type { Message } from "grammy/types";
import type { Delivery } from "../delivery.js";
import { markdownToTelegramHtml } from "../format/telegram.js";

/**
 * How a reply goes out on Telegram: each message in HTML parse mode, as a reply to `message`; a message whose markup
 * Telegram refuses (400, "can't parse entities") is sent again as the plain text the model wrote.
 */
export function telegramReply(api: Api, message: Message): Pick<Delivery, "send" | "classify" | "writtenAt"> {
  return {
    ...telegramPost(api, message.chat.id, message.message_id),
    writtenAt: message.date * 1000,
  };
}

/**
 * How a message goes out to a Telegram chat, as a reply to `replyTo` when given (a schedule's reply answers no
 * message of the chat).
 */
export function telegramPost(
  api: Api,
  chatId: number | string,
  replyTo?: number,
): Pick<Delivery, "send" | "classify"> {
  const options =
    replyTo === undefined
      ? {}
      : { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } };
  return {
    async send(piece) {
      try {
        await api.sendMessage(chatId, markdownToTelegramHtml(piece), { ...options, parse_mode: "HTML" });
      } catch (error) {
        if (!(error instanceof GrammyError && error.error_code === 400)) throw error;
        await api.sendMessage(chatId, piece, options);
      }
    },
    classify(error) {
      if (!(error instanceof GrammyError)) return "unknown";
      return error.error_code === 429 || error.error_code >= 500 ? "refused-retryable" : "refused";
    },
  };
}
