import { openSqliteConversationStore } from "./sqlite.js";
import type { ConversationStore } from "./types.js";

export interface ConversationStoreOptions {
  /** Directory of the embedded database; created when missing. */
  dataDir: string;
}

/** Opens the conversation store: today the embedded SQLite database in `<dataDir>/conversation.db`. */
export async function openConversationStore(options: ConversationStoreOptions): Promise<ConversationStore> {
  return openSqliteConversationStore(options);
}
