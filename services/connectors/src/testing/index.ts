export { type FakeSlack, type SlackPost, signSlackRequest, startFakeSlack } from "./slack.js";
export { connectorStoreContract, type OpenConnectorStore } from "./store-contract.js";
export { type FakeTelegram, type FakeTelegramMessage, startFakeTelegram } from "./telegram.js";
