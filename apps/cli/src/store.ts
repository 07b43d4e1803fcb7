import { openRegistryStore, type RegistryStore } from "@agentry/registry";
import type { CliConfig } from "./config.js";

/** The one place that chooses the registry backend for the CLI. */
export function openStore(config: CliConfig): Promise<RegistryStore> {
  return openRegistryStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
}
