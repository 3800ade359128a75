/**
 * `@turnjournal/reader/_internals`: for the other turnjournal packages of the same release only (the writer, live and
 * conformance packages import it). Not part of the public API: no semver promise, anything here may change or go in
 * any release, patch releases included. Those packages depend on the reader by exact version (pnpm writes
 * `workspace:*` as the exact version when it packs them), so this entry never meets a reader of another release.
 *
 * It holds the event-log fold internals a writer continues with its own appends (spec §6, §15): the fold applied
 * one record at a time, the tail recovery that leaves it open, and the run index of checkpoints. Nothing here is a
 * store-format convention: those are in `@turnjournal/reader/store-format`.
 * @module
 */

// An audit whose turns are walked, not kept as objects (`turnjournal audit` and `recover`, the writer's recovery): the
// same findings and plan as auditStore's, and each session's turns through turnsOf (issue 11: 2 M orphan records).
export { auditStoreListing } from '../audit/audit-store.js';
// The event-log fold, applied one record at a time: a writer continues the fold of its log's tail (spec §15.1, §15.3).
export { epochOf, IncrementalEventFold } from '../event/incremental-event-fold.js';
export { type EventFoldRecovery, recoverEventFold } from '../event/recover-event-log.js';
// The run index that event-log checkpoints carry (`payload.runs`, TJ-EVENT-019), written by writers, read back on open.
export {
  type ReadRunIndexOptions,
  type RunIndexEntry,
  type RunIndexRead,
  readRunIndex,
  runIndexEntries,
  runsFromCheckpoint,
} from '../event/run-index.js';
export { applyRunRecord, copyRun } from '../event/scan-event-runs.js';
// What a check reads: files under paths, or a record store's journals (and where each one it listed is).
export { diskContents } from '../file/disk-contents.js';
// The reader of a backend that serves its journal's committed lines as one byte stream (file store, simulated store).
export { type LineView, LineViewReader } from '../record-store/line-view-reader.js';
export { type RecordStoreContents, recordStoreContents } from '../record-store/record-store-contents.js';
export { buildStreamedReportOf } from '../report/build-report.js';
export { checkStoreListing, contentsOf } from '../store/check-store.js';
export { type TurnsOf, turnsOf } from '../store/session-folds.js';
export type { StoreContents } from '../store/store-contents.js';
