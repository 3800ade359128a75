import type pg from 'pg';

/** A connection or a pool: what runs one statement. A transaction needs a connection (`pg.ClientBase`). */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/** A stream's key in the tables: the path its location has in a file store, `s1/events.jsonl` (spec §4.4). */
export interface StreamKey {
  readonly store: string;
  readonly stream: string;
}
