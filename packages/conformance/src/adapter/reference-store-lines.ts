import { ReaderError } from '@turnjournal/reader';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { type StoreLocation, safeParseStorePath, storePathSegments } from '@turnjournal/reader/store-format';
import { isAcceptedRecord, validateRecord } from '@turnjournal/schema';
import type { AdapterImplementation } from './adapter-implementation.js';
import { AdapterRequestError } from './request-error.js';
import { type BoundStore, fileStoreLinesBinding, type StoreLinesBinding } from './store-lines-bindings.js';

// The reference writer as a record-store adapter (feature `store-lines`, adapter.md §5.8): journals live in a record
// store of their own — a file store under `<root>/.store-lines/`, or a PostgreSQL database — never at the path the
// harness names, so the harness can only see what it wrote through `lines`. A harness that read the path would find
// nothing there: this is what keeps its store path honest in `npm test`.

/** The harness root a path names and the layout location it ends in (spec §4.4). */
function locate(file: string): { readonly root: string; readonly location: StoreLocation } {
  const segments = file.split('/');
  const location = safeParseStorePath(segments);
  if (location === undefined || location.family === 'state')
    throw new AdapterRequestError(
      'bad_request',
      `${file} does not end in a journal location of the layout (spec §4.4)`,
    );
  let depth: number;
  try {
    depth = storePathSegments(location).length;
  } catch (error) {
    // An id no location may be built from (TJ-FAM-010) is the request's fault.
    if (error instanceof ReaderError && error.code === 'invalid_identifier')
      throw new AdapterRequestError('bad_request', error.message);
    throw error;
  }
  return { root: segments.slice(0, -depth).join('/') || '/', location };
}

/** A store in use by an adapter process: how many open journals and reads hold it now. */
interface StoreInUse {
  readonly opened: Promise<BoundStore>;
  users: number;
}

/**
 * The stores of the harness roots an adapter process reaches, opened on first use. A harness works in a fresh root per
 * round (hundreds in a run), so a store nothing holds is released as soon as another root is used: a database store
 * then keeps no idle connections for the roots of rounds long past.
 */
class StoresByRoot {
  readonly #binding: StoreLinesBinding;
  readonly #stores = new Map<string, StoreInUse>();
  readonly #releasing = new Set<Promise<void>>();
  /** Releases that failed, reported by {@link StoresByRoot.close}. */
  readonly #failures: unknown[] = [];

  constructor(binding: StoreLinesBinding) {
    this.#binding = binding;
  }

  /** The store of `root`, held until `done` is called (once). */
  async acquire(root: string): Promise<{ readonly store: RecordStore; done(): void }> {
    let entry = this.#stores.get(root);
    if (entry === undefined) {
      this.#releaseIdle();
      const created: StoreInUse = { opened: this.#binding.open(root), users: 0 };
      this.#stores.set(root, created);
      entry = created;
    }
    const held = entry;
    held.users += 1;
    let store: RecordStore;
    try {
      store = (await held.opened).store;
    } catch (error) {
      held.users -= 1;
      // A store that failed to open is not kept: the next request tries again.
      if (this.#stores.get(root) === held) this.#stores.delete(root);
      throw error;
    }
    let released = false;
    return {
      store,
      done: () => {
        if (released) return;
        released = true;
        held.users -= 1;
      },
    };
  }

  #release(entry: StoreInUse): void {
    const releasing = entry.opened.then(
      (bound) =>
        bound.release().catch((error: unknown) => {
          // Not swallowed: close() reports it.
          this.#failures.push(error);
        }),
      // A store that failed to open holds nothing: its error went to the requests that asked for it (a release at the
      // end of input may come while they are still in flight).
      () => undefined,
    );
    this.#releasing.add(releasing);
    void releasing.then(() => this.#releasing.delete(releasing));
  }

  #releaseIdle(): void {
    for (const [root, entry] of this.#stores) {
      if (entry.users > 0) continue;
      this.#stores.delete(root);
      this.#release(entry);
    }
  }

  /** Releases every store; fails when a release failed, here or earlier. */
  async close(): Promise<void> {
    for (const [root, entry] of this.#stores) {
      this.#stores.delete(root);
      this.#release(entry);
    }
    await Promise.all([...this.#releasing]);
    const failures = this.#failures.splice(0);
    if (failures.length > 0) throw new AggregateError(failures, `releasing ${failures.length} record store(s) failed`);
  }
}

const encoder = new TextEncoder();

/** The line-size limit every reader and writer shares by default (TJ-FRAME-031), in bytes without the LF. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Whether `value` holds an integer that readers in other languages would misread (TJ-FRAME-035). */
function holdsUnsafeInteger(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).some(holdsUnsafeInteger);
}

/**
 * The line a writer appends for `record`: compact JSON, U+2028 and U+2029 escaped (TJ-FRAME-007), and LF. The seam
 * appends lines; what may be in one is the writer's to check, so this refuses what the reference writer refuses.
 */
function encodeLine(record: Record<string, unknown>): Uint8Array {
  // A writer never writes a record its v1 schema rejects (TJ-COMPAT-018, TJ-TURN-015).
  if (!isAcceptedRecord(validateRecord(record)))
    throw new AdapterRequestError('bad_request', 'invalid record: its v1 schema rejects it');
  if (holdsUnsafeInteger(record))
    throw new AdapterRequestError('bad_request', 'invalid record: an integer outside ±(2^53 − 1) (TJ-FRAME-035)');
  const json = JSON.stringify(record)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  const line = encoder.encode(`${json}\n`);
  if (line.length - 1 > MAX_LINE_BYTES)
    throw new AdapterRequestError(
      'failed',
      `the line would be ${line.length - 1} bytes, over the ${MAX_LINE_BYTES}-byte limit (TJ-DUR-028)`,
    );
  return line;
}

/** Every committed line of the journal at `location`, without its LF; none when the store holds no such journal. */
async function committedLines(store: RecordStore, location: StoreLocation): Promise<Uint8Array[]> {
  let reader: Awaited<ReturnType<RecordStore['openReader']>>;
  try {
    reader = await store.openReader(location);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'not_found') return [];
    throw error;
  }
  try {
    const end = await reader.end();
    const bytes = new Uint8Array(end);
    for (let at = 0; at < end; ) {
      const read = await reader.read(bytes, at, end - at, at);
      if (read === 0) throw new Error(`${reader.name} ended at ${at} bytes, before its committed end at ${end}`);
      at += read;
    }
    // A file store's end is the file's size: what follows the last LF is pre-allocated space (spec §3.8) or a write
    // still in progress, and no committed line.
    const committed = bytes.lastIndexOf(0x0a) + 1;
    const lines: Uint8Array[] = [];
    for (let start = 0; start < committed; ) {
      const lf = bytes.indexOf(0x0a, start);
      lines.push(bytes.subarray(start, lf));
      start = lf + 1;
    }
    return lines;
  } finally {
    await reader.close();
  }
}

/** The store-lines adapter: an {@link AdapterImplementation}, and the release of every store it opened. */
export interface StoreLinesImplementation extends AdapterImplementation {
  /** Releases every store (a database's connections); called once the adapter answered `stop`. */
  close(): Promise<void>;
}

/**
 * The reference adapter's writer on the record stores `binding` opens (feature `store-lines`): `open`, `append`,
 * `close` and `lines` reach the journal only through the record-store seam (`@turnjournal/reader/record-store`), on a
 * store kept apart from the paths the harness names, one per harness root. Writer level only: the reader tier reads
 * files the harness wrote.
 */
export function storeLinesImplementation(binding: StoreLinesBinding): StoreLinesImplementation {
  const stores = new StoresByRoot(binding);
  return {
    capabilities: {
      name:
        binding === fileStoreLinesBinding
          ? '@turnjournal/reference (store-lines)'
          : `@turnjournal/reference (store-lines on ${binding.kind})`,
      version: '0.0.0',
      language: `node ${process.versions.node}`,
      protocol: 1,
      levels: ['writer'],
      families: ['turn', 'event'],
      durability: ['every', 'group', 'none'],
      features: ['store-lines'],
    },
    read() {
      return Promise.reject(new AdapterRequestError('unsupported', 'not a reader'));
    },
    replay() {
      return Promise.reject(new AdapterRequestError('unsupported', 'feature replay is not supported'));
    },
    async open(file, durability) {
      const { root, location } = locate(file);
      // The store stays held while the journal is open, so that it is not released under it.
      const { store, done } = await stores.acquire(root);
      let journal: Awaited<ReturnType<RecordStore['openJournal']>>;
      try {
        journal = await store.openJournal(location, { durability });
      } catch (error) {
        done();
        throw error;
      }
      return {
        append: async (record) => {
          await journal.appendLine(encodeLine(record));
        },
        close: async () => {
          try {
            await journal.close();
          } finally {
            done();
          }
        },
      };
    },
    async lines(file) {
      const { root, location } = locate(file);
      const { store, done } = await stores.acquire(root);
      try {
        return await committedLines(store, location);
      } finally {
        done();
      }
    },
    close: () => stores.close(),
  };
}

/** The reference adapter's writer on a file record store under `<root>/.store-lines/` (feature `store-lines`). */
export const referenceStoreLinesImplementation: AdapterImplementation = storeLinesImplementation(fileStoreLinesBinding);
