import type { Logger } from "@agentry/logging";
import type { RegistryStore } from "../store/types.js";

/** What the registry's handlers are given; they reach for nothing else. */
export interface RegistryContext {
  store: RegistryStore;
  logger: Logger;
}
