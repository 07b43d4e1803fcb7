import path from "node:path";
import { env, gatewayAddress, parseEnv, publicOrigin, z } from "@agentry/config";

const schema = z.object({
  DATA_DIR: env.dataDir(),
  /** The registry's Postgres database, as the services use it; unset or empty: the SQLite file in DATA_DIR. */
  DATABASE_URL: env.databaseUrl(),
  /** PORT and PUBLIC_BASE_URL, read as the gateway reads them: console sign-in links point where it serves. */
  ...gatewayAddress(),
  // pnpm sets INIT_CWD to where the user ran `pnpm cli`, while the script itself runs in the package directory.
  INIT_CWD: z.string().min(1).optional(),
});

export interface CliConfig {
  /** Absolute directory of the registry store. */
  dataDir: string;
  /** The registry's Postgres database; absent: SQLite in `dataDir`. */
  databaseUrl?: string;
  /** The service's public origin (PUBLIC_BASE_URL, else http://localhost:PORT), without a trailing slash. */
  publicBaseUrl: string;
}

/** Reads the environment once; a relative DATA_DIR means relative to where the user ran the command. */
export function loadConfig(
  environment: Readonly<Record<string, string | undefined>>,
  cwd: string,
): CliConfig {
  // parseEnv resolves a relative DATA_DIR against INIT_CWD; without one, against the given cwd.
  const parsed = parseEnv(schema, { ...environment, INIT_CWD: environment.INIT_CWD ?? cwd });
  return {
    dataDir: path.resolve(parsed.DATA_DIR),
    ...(parsed.DATABASE_URL ? { databaseUrl: parsed.DATABASE_URL } : {}),
    publicBaseUrl: publicOrigin(parsed),
  };
}
