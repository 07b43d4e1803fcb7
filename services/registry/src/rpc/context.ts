import type { Logger } from "@agentry/logging";
import type { SecretVault } from "../secrets.js";
import type { RegistryStore } from "../store/types.js";

/** What the registry's handlers are given; they reach for nothing else. */
export interface RegistryContext {
  store: RegistryStore;
  logger: Logger;
  /** Seals agent secrets before they are stored, and opens them for RevealSecrets. */
  secrets: SecretVault;
  /** Called after each committed change, so its outbox event is delivered at once rather than on the next tick. */
  changed(): void;
}
