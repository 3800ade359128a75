import { readJournal } from '../framing/read-journal.js';
import { readStateDocument } from '../state/read-state.js';
import type { StoreContents } from '../store/store-contents.js';
import { discoverStore } from './discover-store.js';
import { loadRecord, readRecordBytes } from './load-record.js';
import { readLockStatus } from './lock-file.js';

/**
 * The contents of the files under `paths` (single files, a `_turn_journal` directory, a session directory or a store
 * root), as the file binding lays them out (spec §4.4): what `checkStore(paths)` and `auditStore(paths)` read.
 * Internal to the reader.
 */
export function diskContents(paths: readonly string[]): StoreContents {
  return {
    discover: async () => discoverStore(paths),
    journal: (file, options) => readJournal(file.path, options),
    document: (file, options) => readStateDocument(file.path, options),
    ownerStatus: async (name) => readLockStatus(name),
    loadRecord,
    recordBytes: readRecordBytes,
    released: () => undefined,
    preload: async () => undefined,
  };
}
