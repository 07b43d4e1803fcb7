import type { Logger } from "@agentry/logging";
import type { UrlCheck } from "../domain/endpoint.js";
import type { SecretBox } from "../domain/secrets.js";
import type { WebhookStore } from "../store/types.js";

/** What the webhooks service's handlers are given; they reach for nothing else. */
export interface WebhooksContext {
  store: WebhookStore;
  logger: Logger;
  /** How endpoint secrets are stored. */
  secrets: SecretBox;
  /** The outbound policy endpoint URLs are checked against when written. */
  urls: UrlCheck;
  /** Called once new attempts are committed, so the worker takes them now rather than at its next poll. */
  scheduled(): void;
}
