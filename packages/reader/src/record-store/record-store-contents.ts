import { ReaderError } from '../errors.js';
import { parseObject } from '../framing/decode-line.js';
import { DEFAULT_MAX_DOCUMENT_BYTES, parseStateDocument } from '../state/read-state.js';
import type { StoreContents } from '../store/store-contents.js';
import type { LayoutHint, StoreFile } from '../store/store-listing.js';
import type { StoreLocation } from '../store-format/layout.js';
import { type RecordLocation, recordMovedError } from '../turn/representative.js';
import type { JournalReader, ListOptions, RecordStore } from './record-store.js';

/** The contents of a record store as a check reads them, and the location of each journal it listed. */
export interface RecordStoreContents extends StoreContents {
  /** Where the journal or document listed as `name` is in the store's layout; undefined for a name not listed. */
  locationOf(name: string): StoreLocation | undefined;
}

/**
 * What `checkStore(store)` and `auditStore(store)` read: the journals and documents `store.list(only)` names, each read
 * through the store's lock-free readers (spec §19, TJ-STORE-001). Names are the store's own (a file's path, a
 * database stream's URL). A journal's owner is a live writer exactly when {@link RecordStore.ownerHeld} says so.
 * Internal to the reader.
 */
export function recordStoreContents(store: RecordStore, only: ListOptions = {}): RecordStoreContents {
  const locations = new Map<string, StoreLocation>();
  const loaded = new Map<string, Uint8Array>();
  // The turn records of the journals read and not released yet, by journal and cursor: what a turn fold reads back
  // when a second record of a turn's event arrives. A record store is read asynchronously and the fold is not.
  const turnRecords = new Map<string, Map<number, Uint8Array>>();
  const locationOf = (name: string): StoreLocation => {
    const location = locations.get(name);
    if (location === undefined) throw new ReaderError('invalid_option', `${name} is not a journal this store listed`);
    return location;
  };
  return {
    locationOf: (name) => locations.get(name),
    async discover() {
      const files: StoreFile[] = [];
      for await (const entry of store.list(only)) {
        locations.set(entry.name, entry.location);
        files.push({
          path: entry.name,
          format: entry.location.family === 'state' ? 'json' : 'jsonl',
          hint: hintOf(entry.location),
        });
      }
      // A session's turn journals one after the other, so that the check releases each session's records at once.
      const keys = new Map(files.map((file) => [file, sortKey(file)]));
      files.sort((a, b) => {
        const [x, y] = [keys.get(a) as string, keys.get(b) as string];
        return x < y ? -1 : x > y ? 1 : 0;
      });
      return { files, findings: [] };
    },
    async *journal(file, options) {
      const reader = await store.openReader(locationOf(file.path));
      // Made on the journal's first turn record: an event log or a run file keeps nothing here.
      let kept: Map<number, Uint8Array> | undefined;
      try {
        for await (const batch of reader.records({
          ...(options.mode === undefined ? {} : { mode: options.mode }),
          ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
        })) {
          for (const item of batch) {
            if (item.kind !== 'record') continue;
            const { validation, bytesOffset, bytes } = item.record;
            // A copy: the record's bytes may be a view of the reader's whole buffer.
            if (validation.classification.family !== 'turn') continue;
            if (kept === undefined) {
              kept = new Map();
              turnRecords.set(file.path, kept);
            }
            kept.set(bytesOffset, Uint8Array.from(bytes));
          }
          yield batch;
        }
      } finally {
        await reader.close();
      }
    },
    recordBytes(location) {
      const bytes = turnRecords.get(location.file)?.get(location.offset);
      if (bytes === undefined || bytes.length !== location.length)
        throw recordMovedError(location, 'the record is not among those the check read from the store');
      return bytes;
    },
    released(names) {
      for (const name of names) turnRecords.delete(name);
    },
    async document(file, options) {
      const location = locationOf(file.path);
      if (location.family !== 'state') throw new ReaderError('invalid_option', `${file.path} is not a document`);
      const bytes = await store.readDocument(location);
      if (bytes === undefined)
        throw new ReaderError('not_found', `${file.path}: the document is gone`, { file: file.path });
      const limit = options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
      return parseStateDocument(bytes.length > limit ? 'oversized' : bytes, file.path, options);
    },
    async ownerStatus(name) {
      return (await store.ownerHeld(locationOf(name))) ? 'live' : 'none';
    },
    loadRecord(location) {
      const bytes = loaded.get(keyOf(location));
      if (bytes === undefined)
        throw new ReaderError(
          'invalid_option',
          `${location.file} line ${location.line}: the record was not read ahead`,
        );
      const parsed = parseObject(bytes);
      if (!parsed.ok) throw recordMovedError(location, parsed.reason);
      return parsed.value;
    },
    async preload(wanted) {
      const readers = new Map<string, JournalReader>();
      try {
        for (const location of wanted) {
          const key = keyOf(location);
          if (loaded.has(key)) continue;
          let reader = readers.get(location.file);
          if (reader === undefined) {
            reader = await store.openReader(locationOf(location.file));
            readers.set(location.file, reader);
          }
          loaded.set(key, await readExactly(reader, location));
        }
      } finally {
        for (const reader of readers.values()) await reader.close();
      }
    },
  };
}

function keyOf(location: RecordLocation): string {
  return `${location.offset}\u0000${location.file}`;
}

async function readExactly(reader: JournalReader, location: RecordLocation): Promise<Uint8Array> {
  const bytes = new Uint8Array(location.length);
  let done = 0;
  while (done < location.length) {
    const n = await reader.read(bytes, done, location.length - done, location.offset + done);
    if (n === 0) throw recordMovedError(location, 'the journal is shorter than when it was read');
    done += n;
  }
  return bytes;
}

function hintOf(location: StoreLocation): LayoutHint {
  switch (location.family) {
    case 'turn':
      return { family: 'turn', sessionId: location.sessionId, shard: location.shard };
    case 'event':
      return { family: 'event', sessionId: location.sessionId };
    case 'run':
      return { family: 'run', runId: location.runId };
    case 'state':
      return { family: 'state', sessionId: location.sessionId };
  }
}

/** Where a listed entry goes in a check's order: by name, but a session's turn journals together. */
function sortKey(file: StoreFile): string {
  const { hint } = file;
  return hint.family === 'turn' ? `0\u0000${hint.sessionId}\u0000${hint.shard ?? ''}` : `1\u0000${file.path}`;
}
