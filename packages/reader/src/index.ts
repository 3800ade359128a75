/**
 * `@turnjournal/reader`: the streaming tolerant reader of turnjournal stores. Reading a journal (framing, spec §3),
 * checking and auditing a store, deriving turns, folding and replaying event logs, run and state semantics, and the
 * recovery plan. The on-disk conventions shared with writers (identifiers, layout, lock files) are in
 * `@turnjournal/reader/store-format`.
 *
 * Every name here is a decision: the package's API snapshot (`packages/reader/api.txt`) lists them, and a change to
 * it is reviewed like any other API change.
 * @module
 */

export { type AuditStoreOptions, auditStore, type StoreAudit } from './audit/audit-store.js';
export {
  type HostView,
  planRecovery,
  type RecoveryAction,
  type RecoveryPlan,
  type TurnRecovery,
} from './audit/plan-recovery.js';
export { ReaderError, type ReaderErrorCode } from './errors.js';
// Event logs: fold, tail recovery, replay, seek (spec §6, §15).
export {
  type ActiveRun,
  EventLogFold,
  type EventLogFoldOptions,
  type EventLogSnapshot,
  type EventLogSource,
  type EventLogState,
  type EventRun,
  type EventRunStatus,
  eventLogSnapshot,
  type SegmentOverlay,
} from './event/fold-event-log.js';
export { type EventLogRecovery, type RecoverEventLogOptions, recoverEventLog } from './event/recover-event-log.js';
export { type EventReplay, type ReplayEventLogOptions, type ReplayReason, replayEventLog } from './event/replay.js';
export {
  type ScanEventRunsOptions,
  type ScannedRun,
  type ScannedRunFinish,
  scanEventRuns,
} from './event/scan-event-runs.js';
export { type SeekEventSeqOptions, seekEventSeq } from './event/seek-event-seq.js';
// A whole store: discovery, check, audit, report, recovery plan (spec §4, §12, §13).
export { discoverStore } from './file/discover-store.js';
export type { CommittedLine, OversizedLine, TornTail } from './framing/line-splitter.js';
// Reading one journal (spec §3).
export { DEFAULT_MAX_LINE_BYTES } from './framing/line-splitter.js';
export {
  type JournalItem,
  type JournalRecord,
  type JournalSource,
  RECOVERY_MODES,
  type ReadJournalOptions,
  type RecoveryMode,
  readJournal,
} from './framing/read-journal.js';
export {
  buildReport,
  buildStreamedReport,
  isClean,
  type ReportContext,
  type StreamedReport,
  type StreamedSession,
} from './report/build-report.js';
// Run files and state documents (spec §7, §8, §16).
export { type DerivedRun, type LlmCall, RunFold, type RunOutcome, type RunRecordSource } from './run/fold-run.js';
export { type ReadRunResult, readRunFile } from './run/read-run.js';
export { type CheckStaleStateOptions, checkStaleState, type StaleStateRun } from './state/check-stale-state.js';
export { type ReadStateOptions, type ReadStateResult, readStateDocument } from './state/read-state.js';
export {
  type CheckedFile,
  type CheckSource,
  type CheckStoreOptions,
  checkStore,
  type EventLogSummary,
  type StoreCheck,
} from './store/check-store.js';
export type { LayoutHint, StoreDiscovery, StoreFile } from './store/store-listing.js';
// Turn derivation (spec §10).
export {
  type DerivedSession,
  type DerivedTurn,
  type RecordSource,
  TurnFold,
  type TurnFoldOptions,
  type TurnState,
} from './turn/derive-turns.js';
export type { RecordLocation, RecordSummary, RepresentativeRecord } from './turn/representative.js';
