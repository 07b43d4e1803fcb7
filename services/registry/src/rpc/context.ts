import type { Logger } from "@agentry/logging";
import type { RegistryStore } from "../store/types.js";

/** What the registry's handlers are given; they reach for nothing else. */
export interface RegistryContext {
  store: RegistryStore;
  logger: Logger;
  /** Called after each committed change, so its outbox event is delivered at once rather than on the next tick. */
  changed(): void;
}
