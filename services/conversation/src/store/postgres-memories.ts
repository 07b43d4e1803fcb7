import type { PgDatabase } from "@agentry/pg";
import type pg from "pg";
import { fuseRankings, RECALL_CANDIDATES, searchTerms } from "../memories.js";
import { cursorOf, foreignCursor, pageOf } from "./queries.js";
import type {
  MemoryFilter,
  MemoryOwner,
  MemoryRecord,
  MemoryVector,
  NewMemory,
  Page,
  PageRequest,
} from "./types.js";

interface PgMemoryRow {
  seq: string;
  id: string;
  account_id: string;
  agent_id: string;
  user_id: string;
  text: string;
  source_message_id: string | null;
  created_at: Date;
}

const COLUMNS = "seq, id, account_id, agent_id, user_id, text, source_message_id, created_at";

/**
 * The memories of the Postgres store (its tables of migrations 11 and 17): queries, and the deletions the store's
 * purge and erasure run inside their own transactions. Full-text search is `to_tsvector('english', text)` under
 * GIN; vectors are kept as `real[]` and ranked by pgvector's cosine distance when the database has the extension.
 */
export class PostgresMemories {
  private readonly sql: ReturnType<typeof statements>;
  /** The vector ranking's query, or null without pgvector; looked up once. */
  private nearest: Promise<string | null> | undefined;

  constructor(
    private readonly db: PgDatabase,
    private readonly schema: string,
  ) {
    this.sql = statements(schema);
  }

  /**
   * `purged` takes the agent's shared lock for the transaction and says whether it has been purged, so that a
   * purge cannot slip between the check and the insert.
   */
  async add(
    owner: MemoryOwner,
    memories: readonly NewMemory[],
    limit: number,
    purged: (client: pg.PoolClient) => Promise<boolean>,
    /** Run in the transaction with what is kept (the store's audit record). */
    onStored?: (client: pg.PoolClient, kept: { memory: MemoryRecord; created: boolean }[]) => Promise<void>,
  ): Promise<{ memory: MemoryRecord; created: boolean }[]> {
    return this.db.transaction(async (client) => {
      if (await purged(client)) return [];
      const owned = [owner.accountId, owner.agentId, owner.userId];
      const stored: { memory: MemoryRecord; created: boolean }[] = [];
      for (const memory of memories) {
        const inserted = await client.query<PgMemoryRow>(this.sql.insert, [
          memory.id,
          ...owned,
          memory.text,
          memory.key,
          memory.sourceMessageId,
          memory.createdAt,
        ]);
        const row = inserted.rows[0];
        if (row) stored.push({ memory: memoryRecord(row), created: true });
        else {
          const known = await client.query<PgMemoryRow>(this.sql.byKey, [...owned, memory.key]);
          stored.push({ memory: memoryRecord(known.rows[0]!), created: false });
        }
      }
      const evicted = await client.query<{ id: string }>(this.sql.evict, [...owned, limit]);
      const gone = new Set(evicted.rows.map((row) => row.id));
      const kept = stored.filter(({ memory }) => !gone.has(memory.id));
      await onStored?.(client, kept);
      return kept;
    });
  }

  async list(
    accountId: string,
    agentId: string,
    filter: MemoryFilter,
    page: PageRequest,
  ): Promise<Page<MemoryRecord>> {
    const s = this.schema;
    const values: unknown[] = [accountId, agentId];
    const where = ["account_id = $1", "agent_id = $2"];
    const add = (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    };
    if (filter.userId !== undefined) where.push(`user_id = ${add(filter.userId)}`);
    if (filter.query !== undefined) {
      const terms = searchTerms(filter.query);
      if (terms.length === 0) return { items: [], hasMore: false };
      where.push(`search @@ to_tsquery('english', ${add(terms.join(" & "))})`);
    }
    const cursor = cursorOf(page);
    if (cursor !== null) {
      const position = (
        await this.db.query<{ seq: string }>(this.sql.position, [cursor, accountId, agentId])
      )[0];
      if (!position) throw foreignCursor(page);
      where.push(`seq ${page.before !== null ? "<" : ">"} ${add(position.seq)}`);
    }
    const descending = page.before !== null || (page.after === null && page.order === "desc");
    const text = `SELECT ${COLUMNS} FROM ${s}.memories WHERE ${where.join(" AND ")}
      ORDER BY seq ${descending ? "DESC" : "ASC"} LIMIT ${add(page.limit + 1)}`;
    return pageOf(await this.db.query<PgMemoryRow>(text, values), page, memoryRecord);
  }

  async relevant(
    owner: MemoryOwner,
    text: string,
    limit: number,
    query?: MemoryVector,
  ): Promise<MemoryRecord[]> {
    const owned = [owner.accountId, owner.agentId, owner.userId];
    const nearest = query ? await this.nearestQuery() : null;
    const candidates = nearest ? Math.max(limit, RECALL_CANDIDATES) : limit;
    const terms = searchTerms(text);
    const [byText, byVector] = await Promise.all([
      terms.length === 0
        ? []
        : this.db.query<PgMemoryRow>(this.sql.relevant, [...owned, terms.join(" | "), candidates]),
      nearest && query
        ? this.db.query<PgMemoryRow>(nearest, [...owned, query.model, vectorText(query), candidates])
        : null,
    ]);
    return (byVector ? fuseRankings([byText, byVector], limit) : byText).map(memoryRecord);
  }

  async saveVectors(
    owner: MemoryOwner,
    vectors: readonly { memoryId: string; vector: MemoryVector }[],
  ): Promise<void> {
    for (const { memoryId, vector } of vectors) {
      await this.db.query(this.sql.saveVector, [
        memoryId,
        owner.accountId,
        owner.agentId,
        owner.userId,
        vector.model,
        Array.from(vector.vector),
      ]);
    }
  }

  async searchesVectors(): Promise<boolean> {
    return (await this.nearestQuery()) !== null;
  }

  /** The query ranking by vector, through the schema pgvector was installed in; null without it. */
  private nearestQuery(): Promise<string | null> {
    this.nearest ??= this.db
      .query<{ schema: string }>(
        "SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'vector'",
        [],
      )
      .then((rows) => {
        const schema = rows[0]?.schema;
        if (schema === undefined) return null;
        const vector = `${schema}.vector`;
        return `SELECT ${COLUMNS} FROM (SELECT seq, vector::${vector} OPERATOR(${schema}.<=>) $5::${vector} AS distance
            FROM ${this.schema}.memory_vectors
            WHERE account_id = $1 AND agent_id = $2 AND user_id = $3 AND model = $4
            ORDER BY distance LIMIT $6) v
          JOIN ${this.schema}.memories m USING (seq) ORDER BY v.distance, m.seq DESC`;
      });
    return this.nearest;
  }

  /** On `client`, in its transaction, when given. */
  async delete(
    accountId: string,
    agentId: string,
    memoryId: string,
    client?: pg.PoolClient,
  ): Promise<boolean> {
    const values = [memoryId, accountId, agentId];
    if (client) return ((await client.query(this.sql.deleteOne, values)).rowCount ?? 0) > 0;
    return (await this.db.query(this.sql.deleteOne, values)).length > 0;
  }

  async exportUser(accountId: string, userId: string, cursor: string | null, limit: number) {
    const after = cursor ?? "0";
    const rows = await this.db.query<PgMemoryRow>(this.sql.userMemories, [accountId, userId, after, limit]);
    const last = rows.at(-1);
    return { memories: rows.map(memoryRecord), next: rows.length === limit && last ? last.seq : null };
  }

  /** Within the store's purge transaction. */
  async deleteAgent(client: pg.PoolClient, accountId: string, agentId: string): Promise<void> {
    await client.query(this.sql.deleteAgent, [accountId, agentId]);
  }

  /** Within the store's erasure transaction. */
  async deleteUser(client: pg.PoolClient, accountId: string, userId: string): Promise<void> {
    await client.query(this.sql.deleteUser, [accountId, userId]);
  }
}

/** A vector in pgvector's text form, `[0.1,0.2,…]`. */
function vectorText({ vector }: MemoryVector): string {
  return `[${Array.from(vector).join(",")}]`;
}

function memoryRecord(row: PgMemoryRow): MemoryRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    userId: row.user_id,
    text: row.text,
    sourceMessageId: row.source_message_id,
    createdAt: row.created_at.toISOString(),
  };
}

function statements(s: string) {
  return {
    insert: `INSERT INTO ${s}.memories
        (id, account_id, agent_id, user_id, text, key, source_message_id, created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
      ON CONFLICT (account_id, agent_id, user_id, key) DO NOTHING
      RETURNING ${COLUMNS}`,
    byKey: `SELECT ${COLUMNS} FROM ${s}.memories
      WHERE account_id = $1 AND agent_id = $2 AND user_id = $3 AND key = $4`,
    // Everything but the newest $4 of the user's.
    evict: `DELETE FROM ${s}.memories WHERE seq IN (SELECT seq FROM ${s}.memories
        WHERE account_id = $1 AND agent_id = $2 AND user_id = $3 ORDER BY seq DESC OFFSET $4)
      RETURNING id`,
    position: `SELECT seq FROM ${s}.memories WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    relevant: `SELECT ${COLUMNS} FROM ${s}.memories, to_tsquery('english', $4) query
      WHERE account_id = $1 AND agent_id = $2 AND user_id = $3 AND search @@ query
      ORDER BY ts_rank(search, query) DESC, seq DESC LIMIT $5`,
    // The memory's owner is checked: a vector never lands on another user's memory.
    saveVector: `INSERT INTO ${s}.memory_vectors (seq, account_id, agent_id, user_id, model, vector)
      SELECT seq, account_id, agent_id, user_id, $5, $6 FROM ${s}.memories
      WHERE id = $1 AND account_id = $2 AND agent_id = $3 AND user_id = $4
      ON CONFLICT (seq) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
    deleteOne: `DELETE FROM ${s}.memories WHERE id = $1 AND account_id = $2 AND agent_id = $3 RETURNING 1`,
    userMemories: `SELECT ${COLUMNS} FROM ${s}.memories WHERE account_id = $1 AND user_id = $2 AND seq > $3
      ORDER BY seq LIMIT $4`,
    deleteAgent: `DELETE FROM ${s}.memories WHERE account_id = $1 AND agent_id = $2`,
    deleteUser: `DELETE FROM ${s}.memories WHERE account_id = $1 AND user_id = $2`,
  };
}
