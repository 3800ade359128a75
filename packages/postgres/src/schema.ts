import type { Queryable } from './queryable.js';

/** The version of the tables `PostgresRecordStore.setup` creates, recorded in `turnjournal_schema_version`. */
export const SCHEMA_VERSION = 1;

/**
 * The tables of every store of a database (a store is a name, a column of each table):
 * - `turnjournal_streams`: one row per journal, with its owner epoch (the fencing token, bumped by each new owner) and
 *   where its lines end (`end_cursor`, the sum of their lengths; `line_count`), updated in the transaction that adds
 *   lines, so a reader's end and the rows it reads agree;
 * - `turnjournal_lines`: each line's exact bytes, LF included, with its position (0, 1, …) and its cursor (`start`, the
 *   lengths of the lines before it: a file's byte offset), and the `seq` and `type` of an event record;
 * - `turnjournal_documents`: state snapshots, replaced whole;
 * - `turnjournal_durable`: the seq each session's owner last announced durable (the channel's durable end).
 */
const STATEMENTS = [
  `CREATE TABLE IF NOT EXISTS turnjournal_schema_version (
    version integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE IF NOT EXISTS turnjournal_streams (
    store text NOT NULL,
    stream text NOT NULL,
    epoch bigint NOT NULL,
    end_cursor bigint NOT NULL DEFAULT 0,
    line_count bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (store, stream)
  )`,
  `CREATE TABLE IF NOT EXISTS turnjournal_lines (
    store text NOT NULL,
    stream text NOT NULL,
    position bigint NOT NULL,
    start bigint NOT NULL,
    line bytea NOT NULL,
    seq bigint,
    type text,
    PRIMARY KEY (store, stream, position)
  )`,
  'CREATE UNIQUE INDEX IF NOT EXISTS turnjournal_lines_by_start ON turnjournal_lines (store, stream, start)',
  `CREATE INDEX IF NOT EXISTS turnjournal_lines_by_seq ON turnjournal_lines (store, stream, seq)
    WHERE seq IS NOT NULL`,
  // The lines without a seq (damaged ones, mostly none): the seek to a seq must not pass one.
  `CREATE INDEX IF NOT EXISTS turnjournal_lines_without_seq ON turnjournal_lines (store, stream, start)
    WHERE seq IS NULL`,
  `CREATE TABLE IF NOT EXISTS turnjournal_documents (
    store text NOT NULL,
    key text NOT NULL,
    bytes bytea NOT NULL,
    PRIMARY KEY (store, key)
  )`,
  `CREATE TABLE IF NOT EXISTS turnjournal_durable (
    store text NOT NULL,
    session_id text NOT NULL,
    seq bigint NOT NULL,
    PRIMARY KEY (store, session_id)
  )`,
];

/**
 * Creates the tables when they are missing and records the schema version: idempotent, and safe to run from several
 * hosts at once (a transaction-level advisory lock serialises concurrent runs, whose `IF NOT EXISTS` checks would
 * otherwise race).
 */
export async function setUpSchema(db: Queryable): Promise<void> {
  await db.query('BEGIN');
  try {
    await db.query("SELECT pg_advisory_xact_lock(hashtextextended('turnjournal schema', 0))");
    for (const statement of STATEMENTS) await db.query(statement);
    await db.query('INSERT INTO turnjournal_schema_version (version) VALUES ($1) ON CONFLICT DO NOTHING', [
      SCHEMA_VERSION,
    ]);
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK').catch((rollback: unknown) => {
      // The connection that failed the set-up may be gone: the set-up's own error is what the caller needs.
      (error as { suppressed?: unknown[] }).suppressed = [rollback];
    });
    throw error;
  }
}
