import { type LineView, LineViewReader } from '@turnjournal/reader/_internals';
import type { JournalCursor } from '@turnjournal/reader/record-store';
import type pg from 'pg';
import { seekCommittedSeq } from './line-rows.js';
import type { StreamKey } from './queryable.js';

/**
 * The reader of a journal held by a PostgreSQL store: the codec's own algorithms over the rows seen as one byte
 * stream ({@link LineViewReader}), except the seek to a `seq`, which is one statement on the `seq` column instead of
 * a bisection of reads. `committedEnd` says how far the rows go (the owner's reader also sees lines it has not
 * committed yet, past that end, which the seek leaves to a forward read).
 */
export class PostgresJournalReader extends LineViewReader {
  readonly #pool: pg.Pool;
  readonly #key: StreamKey;
  readonly #committedEnd: () => Promise<number>;

  constructor(name: string, view: LineView, pool: pg.Pool, key: StreamKey, committedEnd: () => Promise<number>) {
    super(name, view);
    this.#pool = pool;
    this.#key = key;
    this.#committedEnd = committedEnd;
  }

  override async seekSeq(target: number, options: { readonly to?: JournalCursor } = {}): Promise<JournalCursor> {
    // end() also refuses a closed reader.
    const end = await this.end();
    const to = options.to ?? end;
    return seekCommittedSeq(this.#pool, this.#key, target, Math.min(to, await this.#committedEnd()));
  }
}
