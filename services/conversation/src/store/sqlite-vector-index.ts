import type Database from "better-sqlite3";

/**
 * How many candidates by Hamming distance a search ranks exactly, per result asked: a few more than asked, since
 * sqlite-vec's selection of the nearest grows faster than their count (40 cost 3.6 times 20 over 10,000 vectors).
 */
export const OVERSAMPLING = 1.25;
/** The fewest candidates a search ranks exactly. */
export const MIN_CANDIDATES = 16;

/** A table of vectors (float32 blobs keyed by `seq`) and the owner columns a search is confined to. */
export interface VectorTable {
  /** The table holding the vectors: `seq INTEGER PRIMARY KEY`, the `partition` columns, `vector BLOB`. */
  source: string;
  /** The prefix of the sqlite-vec tables that index it, one per vector size: `<prefix>_<dimensions>`. */
  prefix: string;
  /** Text columns of `source` a search always names (the owner, and the embedding model). */
  partition: readonly string[];
}

/**
 * A sqlite-vec `vec0` index of a vector table, one per vector size (a `vec0` column has a fixed size, and the
 * embedding model is the operator's choice). The partition columns are `vec0` partition keys, so that a search
 * reads one owner's vectors and no one else's. The index holds each vector quantized to one bit a dimension:
 * a search takes the nearest by Hamming distance among the owner's (a few more than asked, `OVERSAMPLING`),
 * then ranks those by their exact cosine distance, read from the source table. An owner with no more vectors than
 * that is ranked exactly; a larger one may miss a vector the bits placed too far, as any approximate index may.
 * The source table stays the record: triggers keep the index in step with its inserts, updates and deletions
 * (cascades included), and an index is filled from it when first made. Needs sqlite-vec loaded into every
 * connection that writes the source table once an index exists.
 */
export class SqliteVectorIndex {
  /** Nearest-first statements by vector size, for the sizes whose index exists. */
  private readonly searches = new Map<
    number,
    Database.Statement<[Record<string, unknown>], { seq: number; distance: number }>
  >();

  constructor(
    private readonly db: Database.Database,
    private readonly table: VectorTable,
  ) {
    // Vectors stored before the index existed (or by a connection without sqlite-vec) are indexed now.
    const sizes = db
      .prepare<[], number>(`SELECT DISTINCT length(vector) / 4 FROM ${table.source}`)
      .pluck()
      .all();
    for (const dimensions of sizes) if (dimensions > 0) this.ensure(dimensions);
  }

  /** Makes the index of vectors of `dimensions` floats if missing; within the caller's write transaction. */
  ensure(dimensions: number): void {
    if (!Number.isInteger(dimensions) || dimensions <= 0) return;
    const name = this.name(dimensions);
    const exists = this.db
      .prepare<[string], number>("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?")
      .pluck()
      .get(name);
    if (exists) return;
    const { source, partition } = this.table;
    const bytes = dimensions * 4;
    // Bits come in bytes: zeros pad a vector to a multiple of 8 dimensions, and quantize to 0 bits everywhere.
    const bits = Math.ceil(dimensions / 8) * 8;
    const quantized = (vector: string) =>
      bits === dimensions
        ? `vec_quantize_binary(${vector})`
        : `vec_quantize_binary(CAST(${vector} || zeroblob(${(bits - dimensions) * 4}) AS BLOB))`;
    const keys = partition.map((column) => `${column} text partition key`).join(", ");
    const columns = partition.join(", ");
    const values = partition.map((column) => `new.${column}`).join(", ");
    this.db.exec(`
      CREATE VIRTUAL TABLE ${name} USING vec0 (
        ${keys}, vector bit[${bits}]
      );
      INSERT INTO ${name} (rowid, ${columns}, vector)
        SELECT seq, ${columns}, ${quantized("vector")} FROM ${source} WHERE length(vector) = ${bytes};
      CREATE TRIGGER ${name}_insert AFTER INSERT ON ${source} WHEN length(new.vector) = ${bytes} BEGIN
        INSERT INTO ${name} (rowid, ${columns}, vector) VALUES (new.seq, ${values}, ${quantized("new.vector")});
      END;
      CREATE TRIGGER ${name}_update AFTER UPDATE ON ${source} WHEN length(new.vector) = ${bytes} BEGIN
        DELETE FROM ${name} WHERE rowid = old.seq;
        INSERT INTO ${name} (rowid, ${columns}, vector) VALUES (new.seq, ${values}, ${quantized("new.vector")});
      END;
      -- A vector replaced by one of another size leaves this index.
      CREATE TRIGGER ${name}_resize AFTER UPDATE ON ${source}
        WHEN length(old.vector) = ${bytes} AND length(new.vector) <> ${bytes} BEGIN
        DELETE FROM ${name} WHERE rowid = old.seq;
      END;
      CREATE TRIGGER ${name}_delete AFTER DELETE ON ${source} WHEN length(old.vector) = ${bytes} BEGIN
        DELETE FROM ${name} WHERE rowid = old.seq;
      END;
    `);
  }

  /**
   * The `seq`s of the `limit` vectors nearest `vector` among those whose partition columns equal `owner` (in the
   * order of `VectorTable.partition`), nearest first; none when no vector of that size was ever stored.
   */
  nearest(owner: readonly string[], vector: Float32Array, limit: number): number[] {
    const search = this.search(vector.length);
    if (!search) return [];
    const blob = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    const bits = Math.ceil(vector.length / 8) * 8;
    const padded =
      bits === vector.length ? blob : Buffer.concat([blob, Buffer.alloc((bits - vector.length) * 4)]);
    const candidates = Math.max(Math.ceil(limit * OVERSAMPLING), MIN_CANDIDATES);
    // Equal distances: the newest first (vec0 allows no second ordering term).
    return search
      .all({
        padded,
        candidates,
        query: blob,
        ...Object.fromEntries(owner.map((value, i) => [`owner${i}`, value])),
      })
      .sort((a, b) => a.distance - b.distance || b.seq - a.seq)
      .slice(0, limit)
      .map((row) => row.seq);
  }

  private search(dimensions: number) {
    let statement = this.searches.get(dimensions);
    if (statement) return statement;
    const name = this.name(dimensions);
    const exists = this.db
      .prepare<[string], number>("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?")
      .pluck()
      .get(name);
    if (!exists) return undefined;
    const { partition, source } = this.table;
    const owner = partition.map((column, i) => ` AND ${column} = @owner${i}`).join("");
    statement = this.db.prepare<[Record<string, unknown>], { seq: number; distance: number }>(
      `SELECT s.seq, vec_distance_cosine(s.vector, @query) AS distance
       FROM (SELECT rowid FROM ${name} WHERE vector MATCH vec_quantize_binary(@padded) AND k = @candidates${owner}) c
       JOIN ${source} s ON s.seq = c.rowid`,
    );
    this.searches.set(dimensions, statement);
    return statement;
  }

  private name(dimensions: number): string {
    return `${this.table.prefix}_${dimensions}`;
  }
}
