export { type DiscordPost, type FakeDiscord, type FakeDiscordMessage, startFakeDiscord } from "./discord.js";
export { type FakeSlack, type SlackPost, signSlackRequest, startFakeSlack } from "./slack.js";
export { connectorStoreContract, type OpenConnectorStore } from "./store-contract.js";
export { type FakeTelegram, type FakeTelegramMessage, startFakeTelegram } from "./telegram.js";
