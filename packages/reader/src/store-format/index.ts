/**
 * `@turnjournal/reader/store-format`: the on-disk conventions of a store that readers and writers share — valid
 * identifiers (spec §4.3), the recommended layout in both directions (§4.4), the lock-file format and how a lock's
 * holder is proved alive or dead (§11.4), the run index of event-log checkpoints (§6), the event-log fold a writer
 * continues with its own appends (§15), and the default size limits. The writer builds every path and lock with
 * these, and the reader recognises files, judges locks and folds event logs with the same code, so the two cannot
 * drift apart.
 * @module
 */

// The event-log fold, applied one record at a time: a writer continues the fold of its log's tail (spec §15.1, §15.3).
export { IncrementalEventFold } from '../event/incremental-event-fold.js';
export { type EventFoldRecovery, recoverEventFold } from '../event/recover-event-log.js';
// The run index that event-log checkpoints carry (`payload.runs`, spec §6.4), built and read by writers and readers.
export { type RunIndexEntry, runIndexEntries, runsFromCheckpoint } from '../event/run-index.js';
export { applyRunRecord, copyRun } from '../event/scan-event-runs.js';
export { DEFAULT_MAX_LINE_BYTES } from '../framing/line-splitter.js';
export { DEFAULT_MAX_DOCUMENT_BYTES } from '../state/read-state.js';
export { isReservedFileName } from '../store/discover-store.js';
export { explainInvalidIdentifier, isValidIdentifier, MAX_IDENTIFIER_LENGTH } from './identifiers.js';
export {
  EVENT_LOG_FILE_NAME,
  type LayoutDate,
  SESSIONS_DIR,
  STATE_DIR,
  type StoreLocation,
  safeParseStorePath,
  storePathSegments,
  TURN_JOURNAL_DIR,
} from './layout.js';
export {
  currentBootId,
  type LockHolder,
  type LockStatus,
  lockStatusOf,
  readLockStatus,
  safeParseLockHolder,
} from './lock-file.js';
