/**
 * `@turnjournal/writer/file-store`: the file store, the record-store seam's backend on a directory (spec §16): each
 * journal a JSONL file at its location's path, one owner per file by its lock, readers lock-free, state documents
 * replaced atomically, and a notification channel that reaches other processes on the same host through each event
 * log's durable mark.
 * @module
 */

export { type FileRecordStore, type FileRecordStoreOptions, openFileRecordStore } from './store/file-record-store.js';
