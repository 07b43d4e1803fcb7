import { openSqliteRegistryStore } from "./sqlite.js";
import type { RegistryStore } from "./types.js";

export interface RegistryStoreOptions {
  /** Directory of the embedded database; created when missing. */
  dataDir: string;
}

/** Opens the registry's store: today the embedded SQLite database in `<dataDir>/registry.db`. */
export async function openRegistryStore(options: RegistryStoreOptions): Promise<RegistryStore> {
  return openSqliteRegistryStore(options);
}
