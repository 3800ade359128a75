import type {
  JournalReader,
  ListOptions,
  OpenJournalOptions,
  RecordStore,
  StoreEntry,
  WritableJournal,
} from '@turnjournal/reader/record-store';
import { type StoreLocation, safeParseStorePath, storePathSegments } from '@turnjournal/reader/store-format';
import { WriterError } from '@turnjournal/writer';
import pg, { type Pool } from 'pg';
import { CommitQueue } from './commit-queue.js';
import { reportCleanupFailure } from './connection-errors.js';
import { DatabaseClock } from './database-clock.js';
import { readCommittedBytes, requireCommittedEnd } from './line-rows.js';
import { PostgresChannel } from './postgres-channel.js';
import { PostgresJournal } from './postgres-journal.js';
import { PostgresJournalReader } from './postgres-journal-reader.js';
import type { StreamKey } from './queryable.js';
import { setUpSchema } from './schema.js';

/** Options of {@link openPostgresRecordStore}: a pool, or a connection string to open one with. */
export type PostgresRecordStoreOptions = {
  /**
   * The store's name: several stores share one database's tables, each seeing only its own journals. Letters, digits,
   * `_` and `-`, at most 48 characters.
   */
  readonly store: string;
  /**
   * Creates the tables on first use when they are missing ({@link PostgresRecordStore.setup}); true by default. Turn
   * it off when the application's role may not create tables and `setup()` was run by another.
   */
  readonly setup?: boolean;
  /** Line-size limit in bytes without the LF for journals that do not set one; 16 MiB by default. */
  readonly maxLineBytes?: number;
  /**
   * Most transactions of lines the store runs at once; the commits of the journals that wait meanwhile share the next
   * one. 4 by default (or the pool's size, when smaller): many sessions appending at once then share transactions
   * and their WAL flushes instead of each paying for one (BENCHMARKS.md, `postgres-live`).
   */
  readonly maxConcurrentCommits?: number;
} & (
  | {
      /** The pool appends, reads and documents go through; the store never ends it. */
      readonly pool: Pool;
      readonly connectionString?: undefined;
    }
  | {
      /** A `postgresql://` URL: the store opens its own pool, ended by {@link PostgresRecordStore.close}. */
      readonly connectionString: string;
      readonly pool?: undefined;
    }
);

/**
 * The record store (`RecordStore` of `@turnjournal/reader/record-store`) of a PostgreSQL database (see
 * {@link openPostgresRecordStore}).
 */
export interface PostgresRecordStore extends RecordStore {
  /** The store's name within the database. */
  readonly store: string;
  /**
   * Creates the store's tables when they are missing and records the schema version (idempotent), and reads the
   * database's clock for {@link PostgresRecordStore.clock}.
   */
  setup(): Promise<void>;
  /**
   * The database server's clock (epoch ms) as this host estimates it, never decreasing (TJ-STORE-026): what every
   * host sharing the store stamps records with and ages them by, whatever its own clock says. Pass it as the `clock`
   * of `openEventLog` and of the live hub. Read once the store was used (`setup()`, or a journal opened); it
   * measures itself again in the background every minute.
   */
  readonly clock: () => number;
  /** Reads the database server's clock now (epoch ms), with a query; also what {@link PostgresRecordStore.clock} starts from. */
  databaseNow(): Promise<number>;
  /** Stops the channel's listening connection, and ends the pool when the store opened it. Journals close on their own. */
  close(): Promise<void>;
}

type StateLocation = StoreLocation & { readonly family: 'state' };

const STORE_NAME = /^[A-Za-z0-9_-]{1,48}$/;
const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Opens the record store `options.store` of a PostgreSQL database (spec §19.4): journals as rows holding each line's
 * exact bytes, one owner per journal by an advisory lock and an epoch checked in every commit, `LISTEN/NOTIFY` as the
 * channel. Nothing is connected until the store is used.
 */
export function openPostgresRecordStore(options: PostgresRecordStoreOptions): PostgresRecordStore {
  if (typeof options?.store !== 'string' || !STORE_NAME.test(options.store))
    throw new WriterError(
      'invalid_option',
      `a PostgreSQL store needs \`store\`, 1 to 48 letters, digits, _ or -; got ${JSON.stringify(options?.store)}`,
    );
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1)
    throw new WriterError('invalid_option', `maxLineBytes must be a positive integer, got ${String(maxLineBytes)}`);
  const concurrency = options.maxConcurrentCommits;
  if (concurrency !== undefined && (!Number.isSafeInteger(concurrency) || concurrency < 1))
    throw new WriterError(
      'invalid_option',
      `maxConcurrentCommits must be a positive integer, got ${String(concurrency)}`,
    );
  let pool: pg.Pool;
  let ownsPool: boolean;
  if (options.pool instanceof pg.Pool) {
    pool = options.pool;
    ownsPool = false;
  } else if (typeof options.connectionString === 'string' && options.connectionString.length > 0) {
    pool = new pg.Pool({ connectionString: options.connectionString });
    ownsPool = true;
    // An idle pooled connection that dies must not crash the process: the next query gets a new one. (A pool the
    // application gives is the application's to watch.)
    pool.on('error', reportCleanupFailure('an idle pooled connection'));
  } else throw new WriterError('invalid_option', 'a PostgreSQL store needs `pool` or `connectionString`');
  // Dedicated connections (locks, LISTEN) are opened with the pool's own settings.
  const config: pg.ClientConfig = pool.options;
  const store = options.store;
  const name = `postgres:${store}`;
  const keyOf = (location: StoreLocation): StreamKey => ({ store, stream: storePathSegments(location).join('/') });
  const nameOf = (key: StreamKey) => `${name}/${key.stream}`;

  const maxConcurrentCommits = options.maxConcurrentCommits ?? Math.min(4, pool.options.max ?? 10);
  const commits = new CommitQueue(pool, store, maxConcurrentCommits);
  const clock = new DatabaseClock(pool);
  let ready: Promise<void> | null = null;
  const setup = async (): Promise<void> => {
    const client = await pool.connect();
    try {
      await setUpSchema(client);
    } finally {
      client.release();
    }
    await clock.measure();
  };
  /** The tables (unless the application set them up itself) and a first reading of the database's clock. */
  const ensureSchema = (): Promise<void> => {
    ready ??= (options.setup === false ? clock.measure().then(() => undefined) : setup()).catch((error: unknown) => {
      ready = null;
      throw error;
    });
    return ready;
  };

  const channel = new PostgresChannel(pool, config, store, ensureSchema);
  return {
    name,
    store,
    channel,
    setup,
    clock: () => clock.now(),
    databaseNow: () => clock.measure(),
    async close() {
      await channel.close();
      if (ownsPool) await pool.end();
    },

    async openJournal(location: StoreLocation, journal: OpenJournalOptions): Promise<WritableJournal> {
      if (location.family === 'state')
        throw new WriterError('invalid_option', 'a state document is not a journal: use replaceDocument');
      const key = keyOf(location);
      await ensureSchema();
      const lockClient = new pg.Client(config);
      // Until the journal listens to it, a lost lock connection must not crash the process.
      const early = (error: unknown) => reportCleanupFailure(`the lock connection of ${nameOf(key)}`)(error);
      lockClient.on('error', early);
      await lockClient.connect();
      try {
        const { rows } = await lockClient.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked',
          [`${store}/${key.stream}`],
        );
        if (rows[0]?.locked !== true)
          throw new WriterError('journal_locked', `${nameOf(key)} is held by another owner`, nameOf(key));
        // The new owner's epoch: every commit of an earlier owner checks its own and is refused from now on.
        const opened = await lockClient.query<{
          epoch: string;
          end_cursor: string;
          line_count: string;
          created: boolean;
        }>(
          `INSERT INTO turnjournal_streams AS s (store, stream, epoch) VALUES ($1, $2, 1)
           ON CONFLICT (store, stream) DO UPDATE SET epoch = s.epoch + 1
           RETURNING epoch, end_cursor, line_count, (xmax = 0) AS created`,
          [store, key.stream],
        );
        const row = opened.rows[0] as { epoch: string; end_cursor: string; line_count: string; created: boolean };
        const writable = new PostgresJournal(
          nameOf(key),
          pool,
          commits,
          lockClient,
          key,
          {
            epoch: Number(row.epoch),
            end: Number(row.end_cursor),
            lines: Number(row.line_count),
            created: row.created,
          },
          { durability: journal.durability, maxLineBytes: journal.maxLineBytes ?? maxLineBytes },
        );
        lockClient.off('error', early);
        return writable;
      } catch (error) {
        await lockClient.end().catch(reportCleanupFailure(`closing the lock connection of ${nameOf(key)}`));
        throw error;
      }
    },

    async ownerHeld(location: StoreLocation): Promise<boolean> {
      const key = keyOf(location);
      await ensureSchema();
      // pg_locks shows a bigint advisory key as its high and low 32 bits (classid, objid) with objsubid 1.
      const { rows } = await pool.query<{ held: boolean }>(
        `WITH k AS (SELECT hashtextextended($1, 0) AS key)
         SELECT EXISTS (
           SELECT 1 FROM pg_locks, k
            WHERE locktype = 'advisory' AND granted AND objsubid = 1
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND classid = ((k.key >> 32) & 4294967295)::oid AND objid = (k.key & 4294967295)::oid) AS held`,
        [`${store}/${key.stream}`],
      );
      return rows[0]?.held === true;
    },

    async openReader(location: StoreLocation): Promise<JournalReader> {
      const key = keyOf(location);
      await ensureSchema();
      await requireCommittedEnd(pool, key, nameOf(key));
      const end = () => requireCommittedEnd(pool, key, nameOf(key));
      const view = {
        read: (buffer: Uint8Array, offset: number, length: number, position: number) =>
          readCommittedBytes(pool, key, buffer, offset, length, position, Number.MAX_SAFE_INTEGER),
        end,
        close: () => Promise.resolve(),
      };
      return new PostgresJournalReader(nameOf(key), view, pool, key, end);
    },

    async *list(filter: ListOptions = {}): AsyncGenerator<StoreEntry> {
      await ensureSchema();
      const { rows } = await pool.query<{ key: string }>(
        `SELECT stream AS key FROM turnjournal_streams WHERE store = $1
         UNION ALL SELECT key FROM turnjournal_documents WHERE store = $1
         ORDER BY key`,
        [store],
      );
      for (const { key } of rows) {
        // Keys are the layout's paths of locations the store was given (spec §4.4): each parses back to its location.
        const location = safeParseStorePath(key.split('/'));
        if (location === undefined) continue;
        if (filter.family !== undefined && location.family !== filter.family) continue;
        if (filter.sessionId !== undefined && (location.family === 'run' || location.sessionId !== filter.sessionId))
          continue;
        yield { location, name: `${name}/${key}` };
      }
    },

    async readDocument(location: StateLocation): Promise<Uint8Array | undefined> {
      const key = keyOf(location);
      await ensureSchema();
      const { rows } = await pool.query<{ bytes: Buffer }>(
        'SELECT bytes FROM turnjournal_documents WHERE store = $1 AND key = $2',
        [store, key.stream],
      );
      return rows[0] === undefined ? undefined : new Uint8Array(rows[0].bytes);
    },

    async replaceDocument(location: StateLocation, bytes: Uint8Array): Promise<void> {
      const key = keyOf(location);
      await ensureSchema();
      await pool.query(
        `INSERT INTO turnjournal_documents (store, key, bytes) VALUES ($1, $2, $3)
         ON CONFLICT (store, key) DO UPDATE SET bytes = EXCLUDED.bytes`,
        [store, key.stream, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)],
      );
    },
  };
}
