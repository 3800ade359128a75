import type { JournalItem, ReadJournalOptions } from '../framing/read-journal.js';
import type { ReadStateOptions, ReadStateResult } from '../state/read-state.js';
import type { LockStatus } from '../store-format/lock-file.js';
import type { RecordLocation } from '../turn/representative.js';
import type { StoreDiscovery, StoreFile } from './discover-store.js';

/**
 * What a store check and an audit read (spec §13): the listing of a store and the contents of each entry, whatever
 * holds them — files under the paths a caller gave (disk-contents.ts) or a record store (record-store-contents.ts).
 * The check, the audit and the recovery plan are written against this only. Internal to the reader.
 */
export interface StoreContents {
  /** Every journal and document, sorted by name, with its layout hint, and what listing them found wrong. */
  discover(): Promise<StoreDiscovery>;
  /** The records and findings of one journal, in order; throws when it cannot be read (the check reports it). */
  journal(file: StoreFile, options: ReadJournalOptions): AsyncIterable<JournalItem[]>;
  /** One state document, read and judged; throws when it cannot be read. */
  document(file: StoreFile, options: ReadStateOptions): Promise<ReadStateResult>;
  /** Whether a live owner holds the journal named `name` (its writer lock, spec §11.4). */
  ownerStatus(name: string): Promise<LockStatus>;
  /**
   * Reads a whole record back by its location. Synchronous, as the recovery plan reads it: a store whose reads are
   * asynchronous serves only the locations {@link StoreContents.preload} was given.
   */
  loadRecord(location: RecordLocation): Record<string, unknown>;
  /** Reads ahead the records {@link StoreContents.loadRecord} will be asked for (a no-op where reads are synchronous). */
  preload(locations: Iterable<RecordLocation>): Promise<void>;
}
