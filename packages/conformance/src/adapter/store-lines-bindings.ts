import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { openFileRecordStore } from '@turnjournal/writer/file-store';

// Where the reference adapter's writer on a record store (feature `store-lines`, adapter.md §5.8) keeps the journals
// of a harness root: everything else about it (the path it maps, the lines it encodes, what `lines` answers) is the
// same on every store, so a binding only opens and releases stores.

/** A store a binding opened, and how to free what it holds (connections) once it is not used again. */
export interface BoundStore {
  readonly store: RecordStore;
  release(): Promise<void>;
}

/** How the store-lines adapter reaches a record store: one store per harness root, the same in every process. */
export interface StoreLinesBinding {
  /** What the adapter's claimed name says of the store, e.g. `postgres`. */
  readonly kind: string;
  /** Opens the store that holds the journals of the harness root `root`. */
  open(root: string): Promise<BoundStore>;
}

/** The directory of the private file store, beside the layout the harness names. */
const PRIVATE_STORE = '.store-lines';

/**
 * Journals in a file record store under `<root>/.store-lines/`: never at the path the harness names, so a harness that
 * read the path would find nothing there.
 */
export const fileStoreLinesBinding: StoreLinesBinding = {
  kind: 'file',
  open: (root) =>
    Promise.resolve({
      store: openFileRecordStore({ root: join(root, PRIVATE_STORE) }),
      // A file store holds no descriptor between calls: its journals close on their own.
      release: () => Promise.resolve(),
    }),
};

/** The part of `@turnjournal/postgres` the binding uses, loaded only when a PostgreSQL URL is given. */
interface PostgresPackage {
  openPostgresRecordStore(options: {
    readonly connectionString: string;
    readonly store: string;
    readonly setup?: boolean;
  }): RecordStore & { setup(): Promise<void>; close(): Promise<void> };
}

// A variable, so that the compiler and bundlers leave the optional package to run time.
const POSTGRES_PACKAGE = '@turnjournal/postgres';

/** A database URL the PostgreSQL binding cannot take. */
export class StoreLinesUrlError extends Error {
  override readonly name = 'StoreLinesUrlError';
}

/**
 * The store name of a harness root: `tj-` and 40 hex digits of the root's SHA-256, so that every adapter process of a
 * run (after a kill, in a race) reaches the same journals, and two runs, or two rounds in fresh directories, never
 * share one.
 */
export function storeNameOfRoot(root: string): string {
  return `tj-${createHash('sha256').update(root).digest('hex').slice(0, 40)}`;
}

/**
 * Journals in a PostgreSQL database (`@turnjournal/postgres`, which must be installed): one store per harness root,
 * named by {@link storeNameOfRoot}, in the tables the first store opened creates when they are missing. Each store has
 * its own pool of connections (each journal its own lock connection), ended when the store is released.
 * `connectionString` names the database; the binding names the stores itself, so a `store=` parameter is refused.
 */
export async function postgresStoreLinesBinding(connectionString: string): Promise<StoreLinesBinding> {
  if (/[?&]store=/.test(connectionString))
    throw new StoreLinesUrlError(
      'the store-lines adapter names one store per harness root itself: give the database URL without store=',
    );
  const binding = (await import(POSTGRES_PACKAGE)) as PostgresPackage;
  let tablesReady = false;
  return {
    kind: 'postgres',
    async open(root) {
      // Creating the tables once per process is enough; every later store only reads the database's clock.
      const store = binding.openPostgresRecordStore({ connectionString, store: storeNameOfRoot(root), setup: false });
      if (!tablesReady) {
        try {
          await store.setup();
        } catch (error) {
          // The set-up's own error is what the caller needs; a failed close goes with it.
          await store.close().catch((closing: unknown) => {
            (error as { suppressed?: unknown[] }).suppressed = [closing];
          });
          throw error;
        }
        tablesReady = true;
      }
      return { store, release: () => store.close() };
    },
  };
}
