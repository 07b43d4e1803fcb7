import type { Logger } from "@agentry/logging";
import type { AccountService } from "@agentry/proto";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";

/**
 * Collects when each API key was last used and writes the times in one batch every `intervalMs`, so that
 * `lastUsedAt` costs no write per request. A batch that fails is kept and retried with the next one.
 */
export class KeyUsageRecorder {
  private pending = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly accounts: Client<typeof AccountService>,
    private readonly logger: Logger,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(keyId: string): void {
    this.pending.set(keyId, Date.now());
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.accounts.touchApiKeys(
        { uses: [...batch].map(([keyId, ms]) => ({ keyId, useTime: timestampFromMs(ms) })) },
        { timeoutMs: 5000 },
      );
    } catch (error) {
      for (const [keyId, ms] of batch) {
        if ((this.pending.get(keyId) ?? 0) < ms) this.pending.set(keyId, ms);
      }
      this.logger.warn({ err: error }, "could not record API key use; retrying with the next batch");
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
