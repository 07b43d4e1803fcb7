import type Database from "better-sqlite3";
import { load as loadSqliteVec } from "sqlite-vec";
import { fuseRankings, RECALL_CANDIDATES, searchTerms } from "../memories.js";
import { cursorOf, foreignCursor, pageOf } from "./queries.js";
import { SqliteVectorIndex } from "./sqlite-vector-index.js";
import type {
  MemoryFilter,
  MemoryOwner,
  MemoryRecord,
  MemoryVector,
  NewMemory,
  Page,
  PageRequest,
} from "./types.js";

interface SqliteMemoryRow {
  seq: number;
  id: string;
  account_id: string;
  agent_id: string;
  user_id: string;
  text: string;
  source_message_id: string | null;
  created_at: string;
}

/**
 * The memories of the SQLite store (its tables of migrations 11 and 17): statements, and the deletions the store's
 * purge and erasure run inside their own transactions. Full-text search is FTS5 with the Porter stemmer; vectors
 * are float32 blobs, searched through sqlite-vec `vec0` tables (sqlite-vector-index.ts) when the extension loads.
 */
export class SqliteMemories {
  private readonly s: ReturnType<typeof prepare>;
  private readonly add: Database.Transaction<
    (
      owner: MemoryOwner,
      memories: readonly NewMemory[],
      limit: number,
    ) => { memory: MemoryRecord; created: boolean }[]
  >;
  private readonly reads = new Map<string, Database.Statement>();
  private readonly saveVectorsOf: Database.Transaction<
    (owner: MemoryOwner, vectors: readonly { memoryId: string; vector: MemoryVector }[]) => void
  >;
  /** The vector index, or null when sqlite-vec could not be loaded (recall is then by full text alone). */
  private readonly vectors: SqliteVectorIndex | null;

  constructor(
    private readonly db: Database.Database,
    purged: (accountId: string, agentId: string) => boolean,
  ) {
    const s = prepare(db);
    this.s = s;
    const index = vectorIndex(db);
    this.vectors = index;
    this.saveVectorsOf = db.transaction(
      (owner: MemoryOwner, vectors: readonly { memoryId: string; vector: MemoryVector }[]) => {
        for (const { memoryId, vector } of vectors) {
          index?.ensure(vector.vector.length);
          s.saveVector.run({
            ...ownerParams(owner),
            id: memoryId,
            model: vector.model,
            vector: blobOf(vector),
          });
        }
      },
    );
    this.add = db.transaction((owner: MemoryOwner, memories: readonly NewMemory[], limit: number) => {
      if (purged(owner.accountId, owner.agentId)) return [];
      const stored: { memory: MemoryRecord; created: boolean }[] = [];
      for (const memory of memories) {
        const row = s.insert.get({
          id: memory.id,
          account_id: owner.accountId,
          agent_id: owner.agentId,
          user_id: owner.userId,
          text: memory.text,
          key: memory.key,
          source_message_id: memory.sourceMessageId,
          created_at: memory.createdAt,
        });
        if (row) stored.push({ memory: memoryRecord(row), created: true });
        else {
          const known = s.byKey.get(owner.accountId, owner.agentId, owner.userId, memory.key)!;
          stored.push({ memory: memoryRecord(known), created: false });
        }
      }
      s.evict.run(owner.accountId, owner.agentId, owner.userId, limit);
      return stored;
    });
  }

  addMemories(owner: MemoryOwner, memories: readonly NewMemory[], limit: number) {
    const stored = this.add.immediate(owner, memories, limit);
    // An eviction may have taken one just added (a limit smaller than what one call adds): answer what is kept.
    const kept = new Set(
      stored.length === 0 ? [] : this.s.ids.all(owner.accountId, owner.agentId, owner.userId, limit),
    );
    return stored.filter(({ memory }) => kept.has(memory.id));
  }

  list(accountId: string, agentId: string, filter: MemoryFilter, page: PageRequest): Page<MemoryRecord> {
    const cursor = cursorOf(page);
    const values: unknown[] = [accountId, agentId];
    const where = ["account_id = ?", "agent_id = ?"];
    if (filter.userId !== undefined) {
      where.push("user_id = ?");
      values.push(filter.userId);
    }
    if (filter.query !== undefined) {
      const terms = searchTerms(filter.query);
      if (terms.length === 0) return { items: [], hasMore: false };
      // Every word (FTS5 joins phrases with AND).
      where.push("seq IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)");
      values.push(terms.map((term) => `"${term}"`).join(" "));
    }
    if (cursor !== null) {
      const position = this.s.position.get(cursor, accountId, agentId);
      if (position === undefined) throw foreignCursor(page);
      where.push(page.before !== null ? "seq < ?" : "seq > ?");
      values.push(position);
    }
    const descending = page.before !== null || (page.after === null && page.order === "desc");
    values.push(page.limit + 1);
    const rows = this.read(
      `SELECT * FROM memories WHERE ${where.join(" AND ")} ORDER BY seq ${descending ? "DESC" : "ASC"} LIMIT ?`,
    ).all(...values) as SqliteMemoryRow[];
    return pageOf(rows, page, memoryRecord);
  }

  relevant(owner: MemoryOwner, text: string, limit: number, query?: MemoryVector): MemoryRecord[] {
    const byVector =
      query && this.vectors
        ? this.vectors
            .nearest(
              [owner.accountId, owner.agentId, owner.userId, query.model],
              query.vector,
              Math.max(limit, RECALL_CANDIDATES),
            )
            .map((seq) => this.s.bySeq.get(seq))
            .filter((row) => row !== undefined)
        : null;
    const terms = searchTerms(text);
    // Any word, best matches first (bm25 is lower for better ones).
    const match = terms.map((term) => `"${term}"`).join(" OR ");
    const candidates = byVector ? Math.max(limit, RECALL_CANDIDATES) : limit;
    const byText =
      terms.length === 0
        ? []
        : this.s.relevant.all(match, owner.accountId, owner.agentId, owner.userId, candidates);
    const rows = byVector ? fuseRankings([byText, byVector], limit) : byText;
    return rows.map(memoryRecord);
  }

  saveVectors(owner: MemoryOwner, vectors: readonly { memoryId: string; vector: MemoryVector }[]): void {
    this.saveVectorsOf.immediate(owner, vectors);
  }

  searchesVectors(): boolean {
    return this.vectors !== null;
  }

  delete(accountId: string, agentId: string, memoryId: string): boolean {
    return this.s.deleteOne.run(memoryId, accountId, agentId).changes > 0;
  }

  exportUser(accountId: string, userId: string, cursor: string | null, limit: number) {
    const after = cursor === null ? 0 : Number(cursor);
    const rows = this.s.userMemories.all(accountId, userId, after, limit);
    const last = rows.at(-1);
    return {
      memories: rows.map(memoryRecord),
      next: rows.length === limit && last ? String(last.seq) : null,
    };
  }

  /** Within the store's purge transaction. */
  deleteAgent(accountId: string, agentId: string): void {
    this.s.deleteAgent.run(accountId, agentId);
  }

  /** Within the store's erasure transaction. */
  deleteUser(accountId: string, userId: string): void {
    this.s.deleteUser.run(accountId, userId);
  }

  private read(text: string): Database.Statement {
    let statement = this.reads.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.reads.set(text, statement);
    }
    return statement;
  }
}

function memoryRecord(row: SqliteMemoryRow): MemoryRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    userId: row.user_id,
    text: row.text,
    sourceMessageId: row.source_message_id,
    createdAt: row.created_at,
  };
}

interface VectorParams {
  id: string;
  account_id: string;
  agent_id: string;
  user_id: string;
  model: string;
  vector: Buffer;
}

function ownerParams(owner: MemoryOwner) {
  return { account_id: owner.accountId, agent_id: owner.agentId, user_id: owner.userId };
}

/** A vector as sqlite-vec reads it: little-endian float32s. */
function blobOf({ vector }: MemoryVector): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/**
 * The index of memories' vectors, partitioned by owner and model so that a recall reads the user's vectors only;
 * null when sqlite-vec cannot be loaded into this connection.
 */
function vectorIndex(db: Database.Database): SqliteVectorIndex | null {
  try {
    loadSqliteVec(db);
  } catch {
    return null;
  }
  return new SqliteVectorIndex(db, {
    source: "memory_vectors",
    prefix: "memory_vectors_vec",
    partition: ["account_id", "agent_id", "user_id", "model"],
  });
}

function prepare(db: Database.Database) {
  return {
    insert: db.prepare<Omit<SqliteMemoryRow, "seq"> & { key: string }, SqliteMemoryRow>(
      `INSERT INTO memories (id, account_id, agent_id, user_id, text, key, source_message_id, created_at)
       VALUES (@id, @account_id, @agent_id, @user_id, @text, @key, @source_message_id, @created_at)
       ON CONFLICT (account_id, agent_id, user_id, key) DO NOTHING
       RETURNING *`,
    ),
    bySeq: db.prepare<[number], SqliteMemoryRow>("SELECT * FROM memories WHERE seq = ?"),
    byKey: db.prepare<[string, string, string, string], SqliteMemoryRow>(
      "SELECT * FROM memories WHERE account_id = ? AND agent_id = ? AND user_id = ? AND key = ?",
    ),
    // Everything but the newest `limit` of the user's.
    evict: db.prepare<[string, string, string, number]>(
      `DELETE FROM memories WHERE seq IN (SELECT seq FROM memories
         WHERE account_id = ? AND agent_id = ? AND user_id = ? ORDER BY seq DESC LIMIT -1 OFFSET ?)`,
    ),
    ids: db
      .prepare<[string, string, string, number], string>(
        `SELECT id FROM memories WHERE account_id = ? AND agent_id = ? AND user_id = ? ORDER BY seq DESC LIMIT ?`,
      )
      .pluck(),
    position: db
      .prepare<[string, string, string], number>(
        "SELECT seq FROM memories WHERE id = ? AND account_id = ? AND agent_id = ?",
      )
      .pluck(),
    relevant: db.prepare<[string, string, string, string, number], SqliteMemoryRow>(
      `SELECT m.* FROM memories_fts f JOIN memories m ON m.seq = f.rowid
       WHERE memories_fts MATCH ? AND m.account_id = ? AND m.agent_id = ? AND m.user_id = ?
       ORDER BY bm25(memories_fts), m.seq DESC LIMIT ?`,
    ),
    // The memory's owner is checked: a vector never lands on another user's memory.
    saveVector: db.prepare<VectorParams>(
      `INSERT INTO memory_vectors (seq, account_id, agent_id, user_id, model, vector)
       SELECT seq, account_id, agent_id, user_id, @model, @vector FROM memories
       WHERE id = @id AND account_id = @account_id AND agent_id = @agent_id AND user_id = @user_id
       ON CONFLICT (seq) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
    ),
    deleteOne: db.prepare<[string, string, string]>(
      "DELETE FROM memories WHERE id = ? AND account_id = ? AND agent_id = ?",
    ),
    userMemories: db.prepare<[string, string, number, number], SqliteMemoryRow>(
      "SELECT * FROM memories WHERE account_id = ? AND user_id = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    deleteAgent: db.prepare<[string, string]>("DELETE FROM memories WHERE account_id = ? AND agent_id = ?"),
    deleteUser: db.prepare<[string, string]>("DELETE FROM memories WHERE account_id = ? AND user_id = ?"),
  };
}
