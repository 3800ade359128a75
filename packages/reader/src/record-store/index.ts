/**
 * `@turnjournal/reader/record-store`: the record-store seam (spec §16) — what writers, readers and live sessions
 * need from storage, at the level of committed lines in a journal: a store that opens journals for writing, gives
 * lock-free readers, lists what it holds, keeps small documents and carries a notification channel. The file store
 * (`@turnjournal/writer/file-store`) is one backend of it; a database can be another.
 * @module
 */

export type { BackwardLine } from '../event/read-lines-backward.js';
export type {
  JournalAppendAck,
  JournalAppendOptions,
  JournalCursor,
  JournalDurability,
  JournalOpenReport,
  JournalReader,
  JournalReadOptions,
  ListOptions,
  OpenJournalOptions,
  RecordStore,
  SeqReadOptions,
  StoreChannel,
  StoreEntry,
  WritableJournal,
  WritableJournalState,
} from './record-store.js';
