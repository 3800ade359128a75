/**
 * `@turnjournal/reader/store-format`: the on-disk conventions of a store that readers and writers share — valid
 * identifiers (spec §4.3), the recommended layout in both directions (§4.4), the reserved file names, the lock-file
 * format and how a lock's holder is proved alive or dead (§11.4), the default size limits, and where a file's
 * pre-allocated space begins (§3.8). The writer builds
 * every path and lock with these, and the reader recognises files and judges locks with the same code, so the two
 * cannot drift apart.
 * @module
 */

export { isReservedFileName } from '../file/discover-store.js';
export {
  currentBootId,
  currentPidNamespace,
  type LockHolder,
  type LockLease,
  type LockStatus,
  lockStatusOf,
  MAX_LEASE_MS,
  readLockStatus,
  safeParseLockHolder,
} from '../file/lock-file.js';
export { DEFAULT_MAX_LINE_BYTES } from '../framing/line-splitter.js';
export { trailingNulCount } from '../framing/space.js';
export { DEFAULT_MAX_DOCUMENT_BYTES } from '../state/read-state.js';
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
