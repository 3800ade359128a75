import type { JournalReader, RecordStore, StoreEntry } from '@turnjournal/reader/record-store';
import type { StoreLocation } from '@turnjournal/reader/store-format';
import { readTurnRecords } from './read-turn-records.js';
import type { TurnTable } from './turn-table.js';

/** What a turn journal needs of the reader of its session's other shards (see `SiblingShards`). */
export interface Siblings {
  /** True when the shards are known, without waiting, to hold nothing the last read did not fold. */
  unchanged(): boolean;
  /** Folds what the shards gained since the last read. */
  read(): Promise<void>;
  /** Folds every shard from its start (after the table was rebuilt). */
  readFromStart(): Promise<void>;
}

/**
 * The session's other shards read through a record store (spec §19): every turn journal of the session that `list`
 * finds, other than the writer's own, read from where the last read ended. A shard that was rewritten since (a sweep
 * drops lines and adds a `compacted` record) is read again from its start: its end moved back, or the bytes before
 * where the last read ended are no longer the ones it read there (it was rewritten and grew again; the old cursor
 * would fall inside another line). One read at a time, in call order, as `SiblingShards` does; it never vouches for
 * the shards without reading them (`unchanged` is false), which costs a listing per check.
 */
export class StoreSiblings implements Siblings {
  readonly #store: RecordStore;
  readonly #own: string;
  readonly #sessionId: string;
  readonly #table: () => TurnTable;
  /** Per shard: where the last read ended, and the bytes just before it (see TAIL_BYTES). */
  #ends = new Map<string, { readonly end: number; readonly tail: Uint8Array }>();
  #tail: Promise<void> = Promise.resolve();

  constructor(store: RecordStore, own: StoreLocation, sessionId: string, table: () => TurnTable) {
    this.#store = store;
    this.#own = JSON.stringify(own);
    this.#sessionId = sessionId;
    this.#table = table;
  }

  unchanged(): boolean {
    return false;
  }

  read(): Promise<void> {
    return this.#queue(false);
  }

  readFromStart(): Promise<void> {
    return this.#queue(true);
  }

  #queue(fromStart: boolean): Promise<void> {
    const run = this.#tail.then(async () => {
      if (fromStart) this.#ends = new Map();
      const shards: StoreEntry[] = [];
      for await (const entry of this.#store.list({ family: 'turn', sessionId: this.#sessionId }))
        if (JSON.stringify(entry.location) !== this.#own) shards.push(entry);
      for (const shard of shards) await this.#readShard(shard);
    });
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  async #readShard(shard: StoreEntry): Promise<void> {
    let reader: Awaited<ReturnType<RecordStore['openReader']>>;
    try {
      reader = await this.#store.openReader(shard.location);
    } catch (error) {
      // Removed since the listing (a sweep deleted an empty shard): nothing to fold. Anything else leaves turns
      // unknown, and a retry that reached that shard could be written again (TJ-TURN-003): the read fails.
      if ((error as { code?: unknown } | null)?.code === 'not_found') return;
      throw error;
    }
    try {
      const end = await reader.end();
      const known = this.#ends.get(shard.name);
      const from =
        known !== undefined && known.end <= end && equalBytes(await tailBefore(reader, known.end), known.tail)
          ? known.end
          : 0;
      if (from === end) return;
      const bounded = { read: reader.read.bind(reader) };
      const read = await readTurnRecords(shard.name, bounded, this.#table(), from);
      this.#ends.set(shard.name, { end: read.end, tail: await tailBefore(reader, read.end) });
    } finally {
      await reader.close();
    }
  }
}

/**
 * How many bytes before a read's end tell that a shard was not rewritten since: a rewrite that dropped lines before
 * that end moves other bytes there, unless the journal repeats itself over this length.
 */
const TAIL_BYTES = 256;

/** The (up to) {@link TAIL_BYTES} bytes before `end`. */
async function tailBefore(source: { read: JournalReader['read'] }, end: number): Promise<Uint8Array> {
  const length = Math.min(TAIL_BYTES, end);
  const bytes = new Uint8Array(length);
  let filled = 0;
  while (filled < length) {
    const n = await source.read(bytes, filled, length - filled, end - length + filled);
    if (n === 0) break;
    filled += n;
  }
  return bytes.subarray(0, filled);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
