import { join } from 'node:path';
import { ReaderError } from '@turnjournal/reader';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { type StoreLocation, safeParseStorePath, storePathSegments } from '@turnjournal/reader/store-format';
import { isAcceptedRecord, validateRecord } from '@turnjournal/schema';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import type { AdapterImplementation } from './adapter-implementation.js';
import { AdapterRequestError } from './request-error.js';

// The reference writer as a record-store adapter (feature `store-lines`, adapter.md §5.8): journals live in a file
// record store under `<root>/.store-lines/`, never at the path the harness names, so the harness can only see what it
// wrote through `lines`. A harness that read the path would find nothing there: this is what keeps its store path
// honest in `npm test`.

/** The directory of the private store, beside the layout the harness names. */
const PRIVATE_STORE = '.store-lines';

const stores = new Map<string, RecordStore>();

/** The store and location a harness path names: the layout location its path ends in (spec §4.4). */
function locate(file: string): { readonly store: RecordStore; readonly location: StoreLocation } {
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
  const root = join(segments.slice(0, -depth).join('/') || '/', PRIVATE_STORE);
  let store = stores.get(root);
  if (store === undefined) {
    store = openFileRecordStore({ root });
    stores.set(root, store);
  }
  return { store, location };
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

/**
 * The reference adapter's writer on a record store (feature `store-lines`): `open`, `append`, `close` and `lines`
 * reach the journal only through the record-store seam (`@turnjournal/reader/record-store`), on a file store kept
 * apart from the paths the harness names. Writer level only: the reader tier reads files the harness wrote.
 */
export const referenceStoreLinesImplementation: AdapterImplementation = {
  capabilities: {
    name: '@turnjournal/reference (store-lines)',
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
    const { store, location } = locate(file);
    const journal = await store.openJournal(location, { durability });
    return {
      append: async (record) => {
        await journal.appendLine(encodeLine(record));
      },
      close: () => journal.close(),
    };
  },
  async lines(file) {
    const { store, location } = locate(file);
    return committedLines(store, location);
  },
};
