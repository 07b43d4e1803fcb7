import type { PgDatabase } from "@agentry/pg";
import type pg from "pg";
import { searchTerms } from "../memories.js";
import { cursorOf, foreignCursor, pageOf } from "./queries.js";
import type { ChunkMatch, DocumentRecord, NewDocument, Page, PageRequest } from "./types.js";

interface PgDocumentRow {
  seq: string;
  id: string;
  account_id: string;
  agent_id: string;
  title: string;
  content_type: string;
  size_bytes: string;
  text_length: number;
  chunk_count: number;
  source: string;
  created_at: Date;
}

const COLUMNS =
  "seq, id, account_id, agent_id, title, content_type, size_bytes, text_length, chunk_count, source, created_at";

/**
 * The documents of the Postgres store (its tables of migration 16): queries, and the deletion the store's purge
 * runs inside its own transaction. Chunks are searched by `to_tsvector('english', text)` under GIN, ranked by
 * `ts_rank`.
 */
export class PostgresDocuments {
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    private readonly db: PgDatabase,
    schema: string,
  ) {
    this.sql = statements(schema);
  }

  /**
   * `purged` takes the agent's shared lock for the transaction and says whether it has been purged, so that a
   * purge cannot slip between the check and the insert.
   */
  async add(
    accountId: string,
    agentId: string,
    document: NewDocument,
    purged: (client: pg.PoolClient) => Promise<boolean>,
    /** Run in the transaction with the document stored (the store's audit record). */
    onStored?: (client: pg.PoolClient, document: DocumentRecord) => Promise<void>,
  ): Promise<DocumentRecord | null> {
    return this.db.transaction(async (client) => {
      if (await purged(client)) return null;
      const inserted = await client.query<PgDocumentRow>(this.sql.insert, [
        document.id,
        accountId,
        agentId,
        document.title,
        document.contentType,
        document.sizeBytes,
        document.textLength,
        document.chunks.length,
        document.source,
        document.createdAt,
      ]);
      // One statement for every chunk: a 10 MiB text is thousands of them.
      await client.query(this.sql.insertChunks, [
        document.id,
        accountId,
        agentId,
        document.chunks.map((_, position) => position),
        document.chunks,
      ]);
      const added = documentRecord(inserted.rows[0]!);
      await onStored?.(client, added);
      return added;
    });
  }

  async list(accountId: string, agentId: string, page: PageRequest): Promise<Page<DocumentRecord>> {
    const cursor = cursorOf(page);
    const values: unknown[] = [accountId, agentId];
    let where = "";
    if (cursor !== null) {
      const position = (
        await this.db.query<{ seq: string }>(this.sql.position, [cursor, accountId, agentId])
      )[0];
      if (!position) throw foreignCursor(page);
      values.push(position.seq);
      where = ` AND seq ${page.before !== null ? "<" : ">"} $3`;
    }
    const descending = page.before !== null || (page.after === null && page.order === "desc");
    values.push(page.limit + 1);
    const rows = await this.db.query<PgDocumentRow>(
      `${this.sql.page}${where} ORDER BY seq ${descending ? "DESC" : "ASC"} LIMIT $${values.length}`,
      values,
    );
    return pageOf(rows, page, documentRecord);
  }

  async get(accountId: string, agentId: string, documentId: string): Promise<DocumentRecord | null> {
    const row = (await this.db.query<PgDocumentRow>(this.sql.get, [documentId, accountId, agentId]))[0];
    return row ? documentRecord(row) : null;
  }

  async sources(accountId: string, agentId: string): Promise<string[]> {
    const rows = await this.db.query<{ source: string }>(this.sql.sources, [accountId, agentId]);
    return rows.map((row) => row.source);
  }

  /** On `client`, in its transaction, when given. */
  async delete(
    accountId: string,
    agentId: string,
    documentId: string,
    client?: pg.PoolClient,
  ): Promise<boolean> {
    const values = [documentId, accountId, agentId];
    if (client) return ((await client.query(this.sql.deleteOne, values)).rowCount ?? 0) > 0;
    return (await this.db.query(this.sql.deleteOne, values)).length > 0;
  }

  async relevant(accountId: string, agentId: string, text: string, limit: number): Promise<ChunkMatch[]> {
    const terms = searchTerms(text);
    if (terms.length === 0) return [];
    const rows = await this.db.query<{
      document_id: string;
      title: string;
      position: number;
      text: string;
      score: number;
    }>(this.sql.relevant, [accountId, agentId, terms.join(" | "), limit]);
    return rows.map((row) => ({
      documentId: row.document_id,
      title: row.title,
      chunk: row.position,
      text: row.text,
      score: Number(row.score),
    }));
  }

  /** Within the store's purge transaction. */
  async deleteAgent(client: pg.PoolClient, accountId: string, agentId: string): Promise<void> {
    await client.query(this.sql.deleteAgent, [accountId, agentId]);
  }
}

function documentRecord(row: PgDocumentRow): DocumentRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    title: row.title,
    contentType: row.content_type,
    sizeBytes: Number(row.size_bytes),
    textLength: row.text_length,
    chunkCount: row.chunk_count,
    source: row.source,
    createdAt: row.created_at.toISOString(),
  };
}

function statements(s: string) {
  return {
    insert: `INSERT INTO ${s}.documents
        (id, account_id, agent_id, title, content_type, size_bytes, text_length, chunk_count, source, created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
      RETURNING ${COLUMNS}`,
    insertChunks: `INSERT INTO ${s}.document_chunks (document_id, account_id, agent_id, position, text)
      SELECT $1, $2, $3, position, text FROM unnest($4::int[], $5::text[]) AS chunk (position, text)`,
    position: `SELECT seq FROM ${s}.documents WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    page: `SELECT ${COLUMNS} FROM ${s}.documents WHERE account_id = $1 AND agent_id = $2`,
    get: `SELECT ${COLUMNS} FROM ${s}.documents WHERE id = $1 AND account_id = $2 AND agent_id = $3`,
    sources: `SELECT DISTINCT source FROM ${s}.documents WHERE account_id = $1 AND agent_id = $2 AND source <> ''`,
    relevant: `SELECT c.document_id, d.title, c.position, c.text, ts_rank(c.search, query) AS score
      FROM ${s}.document_chunks c JOIN ${s}.documents d ON d.id = c.document_id, to_tsquery('english', $3) query
      WHERE c.account_id = $1 AND c.agent_id = $2 AND c.search @@ query
      ORDER BY score DESC, c.seq LIMIT $4`,
    deleteOne: `DELETE FROM ${s}.documents WHERE id = $1 AND account_id = $2 AND agent_id = $3 RETURNING 1`,
    deleteAgent: `DELETE FROM ${s}.documents WHERE account_id = $1 AND agent_id = $2`,
  };
}
