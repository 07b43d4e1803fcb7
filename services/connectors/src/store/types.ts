export type Clock = () => number;

/**
 * What the connectors keep: who polls each bot (a lease), how far each bot's updates are read, and which platform
 * messages have been answered. Every process that runs connectors on one database shares it.
 */
export interface ConnectorStore {
  /**
   * Takes the lease on `key` for `holder` until `ttlMs` from now, or renews it; true when `holder` holds it
   * afterwards. A lease whose holder stopped renewing it is free once expired.
   */
  acquireLease(key: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up, if `holder` has it, so another process may take it at once. */
  releaseLease(key: string, holder: string): Promise<void>;
  /** The position a bot's updates are read from (Telegram's offset); undefined before the first. */
  cursor(key: string): Promise<string | undefined>;
  setCursor(key: string, value: string): Promise<void>;
  /**
   * Records that a platform message was answered; false when it already was (by this process or another), in
   * which case it must not be answered again.
   */
  markAnswered(messageKey: string, agentId: string): Promise<boolean>;
  /**
   * Takes back a `markAnswered` whose reply the platform refused outright (nothing of it was delivered), so the
   * message may be answered when it arrives again.
   */
  releaseAnswered(messageKey: string): Promise<void>;
  /** Whether a platform message was answered. */
  answered(messageKey: string): Promise<boolean>;
  /** Whether the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
