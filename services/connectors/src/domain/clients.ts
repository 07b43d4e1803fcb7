import { isPlatform, type Platform } from "@agentry/core";

export { clientTypes, PLATFORM_SECRETS, type Platform, RUN_PLATFORMS } from "@agentry/core";

export type RespondIn = "direct" | "mentions" | "all";

/** One `clients` item the service runs, with its configuration read and defaulted. */
export interface ClientConfig {
  type: Platform;
  respondIn: RespondIn;
  /** Platform chat or channel ids answered in; undefined answers in any. */
  allowedChats: readonly string[] | undefined;
  /** Telegram only: long polling (default) or updates pushed to the gateway. */
  mode: "polling" | "webhook";
}

/**
 * Reads an agent's `clients` (JSON, as the registry stores it): a list of platform names or `{type, ...config}`.
 * Items the service does not run, and malformed items, are left out; the registry already validated the shape.
 */
export function runClients(clients: unknown): ClientConfig[] {
  if (!Array.isArray(clients)) return [];
  const configs: ClientConfig[] = [];
  for (const item of clients) {
    const fields: Record<string, unknown> =
      typeof item === "string" ? { type: item } : item !== null && typeof item === "object" ? item : {};
    const type = fields.type;
    if (!isPlatform(type) || configs.some((config) => config.type === type)) continue;
    const respondIn = fields.respondIn;
    const allowed = fields.allowedChats;
    configs.push({
      type,
      respondIn: respondIn === "direct" || respondIn === "all" ? respondIn : "mentions",
      allowedChats: Array.isArray(allowed) ? allowed.map((id) => String(id)) : undefined,
      mode: fields.mode === "webhook" ? "webhook" : "polling",
    });
  }
  return configs;
}

/** What an inbound message is, as far as deciding whether to answer it goes. */
export interface InboundFacts {
  /** A one-to-one chat with the bot (Telegram private chat, Discord DM). */
  direct: boolean;
  /** The bot is mentioned, or the message replies to one of the bot's. */
  addressed: boolean;
  /** Sent by a bot (the agent itself included). */
  fromBot: boolean;
  chatId: string;
}

/** Whether the agent answers a message, by `respondIn` and `allowedChats`; bots are never answered. */
export function answers(config: ClientConfig, message: InboundFacts): boolean {
  if (message.fromBot) return false;
  if (config.allowedChats && !config.allowedChats.includes(message.chatId)) return false;
  if (message.direct) return true;
  if (config.respondIn === "direct") return false;
  if (config.respondIn === "all") return true;
  return message.addressed;
}
