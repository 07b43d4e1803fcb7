/** The part of `oidc-provider`'s API the test provider uses (the package ships no types). */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients: Record<string, unknown>[];
    claims?: Record<string, string[]>;
    pkce?: { required: () => boolean };
    findAccount(ctx: unknown, id: string): Promise<Account>;
  }

  // biome-ignore lint/style/noDefaultExport: the package's own export is its default
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
