import { ReaderError } from '@turnjournal/reader';
import type { Queryable, StreamKey } from './queryable.js';

/**
 * Copies the committed bytes of `key` from cursor `position` into `buffer` (at most `length` of them, none at or
 * after `to`), as the lines seen as one byte stream: the rows that overlap the range, each cut to its overlap in the
 * database, so a read of a few bytes of a long line moves a few bytes. Returns how many were copied.
 */
export async function readCommittedBytes(
  db: Queryable,
  key: StreamKey,
  buffer: Uint8Array,
  offset: number,
  length: number,
  position: number,
  to: number,
): Promise<number> {
  const end = Math.min(position + length, to);
  if (end <= position) return 0;
  // The first row is the one that starts at or before `position` (the last such start, found on the start index).
  const { rows } = await db.query<{ start: string; part: Buffer }>(
    `SELECT start, substring(line FROM (GREATEST($3 - start, 0) + 1)::int FOR ($4 - GREATEST($3, start))::int) AS part
       FROM turnjournal_lines
      WHERE store = $1 AND stream = $2 AND start < $4
        AND start >= COALESCE(
          (SELECT start FROM turnjournal_lines
            WHERE store = $1 AND stream = $2 AND start <= $3 ORDER BY start DESC LIMIT 1), 0)
      ORDER BY start`,
    [key.store, key.stream, position, end],
  );
  let copied = 0;
  for (const row of rows) {
    const start = Math.max(Number(row.start), position);
    // Rows are contiguous: a row that does not begin where the last ended means lines vanished under the read (a
    // rewrite committed meanwhile), and the bytes after the gap belong to another version of the journal.
    if (start !== position + copied) break;
    buffer.set(row.part, offset + copied);
    copied += row.part.length;
  }
  return copied;
}

/** The cursor after the last committed line of `key`, or undefined when the store holds no such journal. */
export async function committedEnd(db: Queryable, key: StreamKey): Promise<number | undefined> {
  const { rows } = await db.query<{ end_cursor: string }>(
    'SELECT end_cursor FROM turnjournal_streams WHERE store = $1 AND stream = $2',
    [key.store, key.stream],
  );
  return rows[0] === undefined ? undefined : Number(rows[0].end_cursor);
}

/** The end of `key`, failing with `not_found` when the journal is gone (a reader of a journal that was removed). */
export async function requireCommittedEnd(db: Queryable, key: StreamKey, name: string): Promise<number> {
  const end = await committedEnd(db, key);
  if (end === undefined) throw new ReaderError('not_found', `${name} does not exist`, { file: name });
  return end;
}

/**
 * The statement of {@link seekCommittedSeq}: `$1` store, `$2` stream, `$3` target seq, `$4` the cursor nothing at or
 * after is read. Exported for the benchmark that shows its plan.
 */
// The first line at or above the target in seq order, through the seq index: `min(start)` let the planner walk the
// start index from the journal's beginning and filter on seq, a scan of the whole journal (a cost that grows with its
// length: bench/results/history.md, "Figures that were in code comments") whenever it had no statistics or a table of
// mixed sessions. Seqs grow with position in an event log (the file binding's bisection assumes the same), so that line
// is the first one at or above the target.
export const SEEK_SEQ_SQL = `SELECT LEAST(
   (SELECT start FROM turnjournal_lines
     WHERE store = $1 AND stream = $2 AND seq IS NOT NULL AND seq >= $3 AND start < $4
     ORDER BY seq, start LIMIT 1),
   (SELECT min(start) FROM turnjournal_lines
     WHERE store = $1 AND stream = $2 AND seq IS NULL AND start < $4)) AS cursor`;

/**
 * A cursor before which every committed line of `key` below `to` is an event record with a `seq` under `target`
 * (TJ-STORE-005), found with the `seq` column in one statement: the first line at or above the target, or the first
 * line with no `seq` (not an event record to this store's parse: a damaged line, or one the reader may still read as
 * a record), whichever comes first; `to` when there is none.
 */
export async function seekCommittedSeq(db: Queryable, key: StreamKey, target: number, to: number): Promise<number> {
  const { rows } = await db.query<{ cursor: string | null }>(SEEK_SEQ_SQL, [key.store, key.stream, target, to]);
  const cursor = rows[0]?.cursor;
  return cursor === null || cursor === undefined ? to : Number(cursor);
}
