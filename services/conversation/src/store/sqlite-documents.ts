import type Database from "better-sqlite3";
import { load as loadSqliteVec } from "sqlite-vec";
import { fuseChunks } from "../documents.js";
import { RECALL_CANDIDATES, searchTerms } from "../memories.js";
import { cursorOf, foreignCursor, pageOf } from "./queries.js";
import { SqliteVectorIndex } from "./sqlite-vector-index.js";
import type { ChunkMatch, DocumentRecord, MemoryVector, NewDocument, Page, PageRequest } from "./types.js";

interface SqliteDocumentRow {
  seq: number;
  id: string;
  account_id: string;
  agent_id: string;
  title: string;
  content_type: string;
  size_bytes: number;
  text_length: number;
  chunk_count: number;
  source: string;
  created_at: string;
}

interface SqliteChunkMatchRow {
  document_id: string;
  title: string;
  position: number;
  text: string;
  rank: number;
}

/**
 * The documents of the SQLite store (its tables of migrations 16 and 20): statements, and the deletion the store's
 * purge runs inside its own transaction. Chunks are searched with FTS5 (Porter stemmer); their rank is bm25's.
 * Their vectors, where an embeddings provider made them, are searched through a sqlite-vec index partitioned by
 * agent (sqlite-vector-index.ts) when the extension loads.
 */
export class SqliteDocuments {
  private readonly s: ReturnType<typeof prepare>;
  private readonly add: Database.Transaction<
    (accountId: string, agentId: string, document: NewDocument) => DocumentRecord | null
  >;
  private readonly saveVectorsOf: Database.Transaction<
    (accountId: string, agentId: string, vectors: readonly ChunkVector[]) => void
  >;
  /** The vector index, or null when sqlite-vec could not be loaded (chunks are then found by full text alone). */
  private readonly vectors: SqliteVectorIndex | null;

  constructor(db: Database.Database, purged: (accountId: string, agentId: string) => boolean) {
    const s = prepare(db);
    this.s = s;
    const index = vectorIndex(db);
    this.vectors = index;
    this.saveVectorsOf = db.transaction(
      (accountId: string, agentId: string, vectors: readonly ChunkVector[]) => {
        for (const { documentId, chunk, vector } of vectors) {
          index?.ensure(vector.vector.length);
          s.saveVector.run({
            account_id: accountId,
            agent_id: agentId,
            document_id: documentId,
            position: chunk,
            model: vector.model,
            vector: Buffer.from(vector.vector.buffer, vector.vector.byteOffset, vector.vector.byteLength),
          });
        }
      },
    );
    this.add = db.transaction((accountId: string, agentId: string, document: NewDocument) => {
      if (purged(accountId, agentId)) return null;
      const row = s.insert.get({
        id: document.id,
        account_id: accountId,
        agent_id: agentId,
        title: document.title,
        content_type: document.contentType,
        size_bytes: document.sizeBytes,
        text_length: document.textLength,
        chunk_count: document.chunks.length,
        source: document.source,
        created_at: document.createdAt,
      })!;
      document.chunks.forEach((text, position) => {
        s.insertChunk.run(document.id, accountId, agentId, position, text);
      });
      return documentRecord(row);
    });
  }

  addDocument(accountId: string, agentId: string, document: NewDocument): DocumentRecord | null {
    return this.add.immediate(accountId, agentId, document);
  }

  list(accountId: string, agentId: string, page: PageRequest): Page<DocumentRecord> {
    const cursor = cursorOf(page);
    let position: number | undefined;
    if (cursor !== null) {
      position = this.s.position.get(cursor, accountId, agentId);
      if (position === undefined) throw foreignCursor(page);
    }
    const descending = page.before !== null || (page.after === null && page.order === "desc");
    const statement = descending ? this.s.pageDown : this.s.pageUp;
    const bound = position ?? (descending ? Number.MAX_SAFE_INTEGER : 0);
    const rows = statement.all(accountId, agentId, bound, page.limit + 1);
    return pageOf(rows, page, documentRecord);
  }

  get(accountId: string, agentId: string, documentId: string): DocumentRecord | null {
    const row = this.s.get.get(documentId, accountId, agentId);
    return row ? documentRecord(row) : null;
  }

  sources(accountId: string, agentId: string): string[] {
    return this.s.sources.all(accountId, agentId);
  }

  delete(accountId: string, agentId: string, documentId: string): boolean {
    // The chunks go with it (ON DELETE CASCADE), and their full-text rows with them (trigger).
    return this.s.deleteOne.run(documentId, accountId, agentId).changes > 0;
  }

  relevant(
    accountId: string,
    agentId: string,
    text: string,
    limit: number,
    query?: MemoryVector,
  ): ChunkMatch[] {
    const byVector =
      query && this.vectors
        ? this.vectors
            .nearest([accountId, agentId, query.model], query.vector, Math.max(limit, RECALL_CANDIDATES))
            .map((seq) => this.s.chunkBySeq.get(seq))
            .filter((row) => row !== undefined)
            .map((row) => chunkMatch({ ...row, rank: 0 }))
        : null;
    const terms = searchTerms(text);
    const match = terms.map((term) => `"${term}"`).join(" OR ");
    const candidates = byVector ? Math.max(limit, RECALL_CANDIDATES) : limit;
    const byText =
      terms.length === 0 ? [] : this.s.relevant.all(match, accountId, agentId, candidates).map(chunkMatch);
    return byVector ? fuseChunks([byText, byVector], limit) : byText;
  }

  saveVectors(accountId: string, agentId: string, vectors: readonly ChunkVector[]): void {
    this.saveVectorsOf.immediate(accountId, agentId, vectors);
  }

  /** Within the store's purge transaction. */
  deleteAgent(accountId: string, agentId: string): void {
    this.s.deleteAgent.run(accountId, agentId);
  }
}

interface ChunkVector {
  documentId: string;
  chunk: number;
  vector: MemoryVector;
}

function chunkMatch(row: SqliteChunkMatchRow): ChunkMatch {
  return {
    documentId: row.document_id,
    title: row.title,
    chunk: row.position,
    text: row.text,
    // bm25 is negative, lower for better matches.
    score: -row.rank,
  };
}

/** The index of chunks' vectors, partitioned by agent and model; null when sqlite-vec cannot be loaded. */
function vectorIndex(db: Database.Database): SqliteVectorIndex | null {
  try {
    loadSqliteVec(db);
  } catch {
    return null;
  }
  return new SqliteVectorIndex(db, {
    source: "document_chunk_vectors",
    prefix: "document_chunk_vectors_vec",
    partition: ["account_id", "agent_id", "model"],
  });
}

function documentRecord(row: SqliteDocumentRow): DocumentRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    title: row.title,
    contentType: row.content_type,
    sizeBytes: row.size_bytes,
    textLength: row.text_length,
    chunkCount: row.chunk_count,
    source: row.source,
    createdAt: row.created_at,
  };
}

function prepare(db: Database.Database) {
  return {
    insert: db.prepare<Omit<SqliteDocumentRow, "seq">, SqliteDocumentRow>(
      `INSERT INTO documents (id, account_id, agent_id, title, content_type, size_bytes, text_length, chunk_count,
         source, created_at)
       VALUES (@id, @account_id, @agent_id, @title, @content_type, @size_bytes, @text_length, @chunk_count,
         @source, @created_at)
       RETURNING *`,
    ),
    insertChunk: db.prepare<[string, string, string, number, string]>(
      "INSERT INTO document_chunks (document_id, account_id, agent_id, position, text) VALUES (?, ?, ?, ?, ?)",
    ),
    position: db
      .prepare<[string, string, string], number>(
        "SELECT seq FROM documents WHERE id = ? AND account_id = ? AND agent_id = ?",
      )
      .pluck(),
    pageDown: db.prepare<[string, string, number, number], SqliteDocumentRow>(
      "SELECT * FROM documents WHERE account_id = ? AND agent_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
    ),
    pageUp: db.prepare<[string, string, number, number], SqliteDocumentRow>(
      "SELECT * FROM documents WHERE account_id = ? AND agent_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?",
    ),
    get: db.prepare<[string, string, string], SqliteDocumentRow>(
      "SELECT * FROM documents WHERE id = ? AND account_id = ? AND agent_id = ?",
    ),
    sources: db
      .prepare<[string, string], string>(
        "SELECT DISTINCT source FROM documents WHERE account_id = ? AND agent_id = ? AND source <> ''",
      )
      .pluck(),
    relevant: db.prepare<[string, string, string, number], SqliteChunkMatchRow>(
      `SELECT c.document_id, d.title, c.position, c.text, bm25(document_chunks_fts) AS rank
       FROM document_chunks_fts f JOIN document_chunks c ON c.seq = f.rowid JOIN documents d ON d.id = c.document_id
       WHERE document_chunks_fts MATCH ? AND c.account_id = ? AND c.agent_id = ?
       ORDER BY rank, c.seq LIMIT ?`,
    ),
    chunkBySeq: db.prepare<[number], Omit<SqliteChunkMatchRow, "rank">>(
      `SELECT c.document_id, d.title, c.position, c.text
       FROM document_chunks c JOIN documents d ON d.id = c.document_id WHERE c.seq = ?`,
    ),
    // The chunk's agent is checked: a vector never lands on another agent's chunk.
    saveVector: db.prepare<{
      account_id: string;
      agent_id: string;
      document_id: string;
      position: number;
      model: string;
      vector: Buffer;
    }>(
      `INSERT INTO document_chunk_vectors (seq, account_id, agent_id, model, vector)
       SELECT seq, account_id, agent_id, @model, @vector FROM document_chunks
       WHERE document_id = @document_id AND position = @position AND account_id = @account_id
         AND agent_id = @agent_id
       ON CONFLICT (seq) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
    ),
    deleteOne: db.prepare<[string, string, string]>(
      "DELETE FROM documents WHERE id = ? AND account_id = ? AND agent_id = ?",
    ),
    deleteAgent: db.prepare<[string, string]>("DELETE FROM documents WHERE account_id = ? AND agent_id = ?"),
  };
}
