import type { LockStatus } from '../file/lock-file.js';
import type { JournalItem, ReadJournalOptions } from '../framing/read-journal.js';
import type { ReadStateOptions, ReadStateResult } from '../state/read-state.js';
import type { RecordLocation } from '../turn/representative.js';
import type { StoreDiscovery, StoreFile } from './store-listing.js';

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
  /**
   * The bytes of a record of a journal this check has read and not released yet, for a turn fold that meets a second
   * record of a turn's event (TurnFoldOptions.readRecord). Synchronous, as the fold is.
   */
  recordBytes(location: RecordLocation): Uint8Array;
  /** The check is done with these journals: what was kept of them for `recordBytes` can go. */
  released(names: readonly string[]): void;
}
