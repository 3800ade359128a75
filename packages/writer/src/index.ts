/**
 * `@turnjournal/writer`: the durable writer of turnjournal stores (spec §11, §12, §14): crash-safe appends with
 * locks and torn-tail repair, the turn lifecycle API, event-log and run writers, state snapshots, startup recovery
 * and retention. The file-system layer (to inject one in tests) and the low-level durable appender are in
 * `@turnjournal/writer/file-system`.
 *
 * Every name here is a decision: the package's API snapshot (`packages/writer/api.txt`) lists them.
 * @module
 */

export {
  type AppendAck,
  DURABILITY_MODES,
  type Durability,
  type OpenReport,
  type TornTailReport,
} from './append/append-file.js';
// Errors: one base class with a stable code; the subclasses add what a caller needs for that code.
export {
  AppendCancelledError,
  JournalLockedError,
  JournalWriteError,
  WriterError,
  type WriterErrorCode,
  WriterPoisonedError,
} from './errors.js';
export {
  type CompactEventLogFileOptions,
  type CompactEventLogOptions,
  compactEventLog,
  type EventLogCompaction,
  type EventLogCompactionBlock,
} from './event/compact-event-log.js';
// Event logs (spec §6, §15).
export type { EventLog } from './event/event-log.js';
export {
  type EventChatCancelledInput,
  type EventChatDeltaInput,
  type EventChatErrorInput,
  type EventChatStartedInput,
  type EventDeliveryAckOptions,
  type EventLogAck,
  type EventLogCommonOptions,
  type EventLogMessage,
  type EventLogOpenRecovery,
  type EventSegmentStartedInput,
  type EventToolEndInput,
  type EventToolResultInput,
  type EventToolStartInput,
  type OpenEventLogOptions,
  SERVER_STARTUP_RECOVERY,
} from './event/event-log-inputs.js';
export { eventLogPath, openEventLog } from './event/open-event-log.js';
export type { FileSystem } from './fs/file-system.js';
export type { AcquireLockOptions } from './fs/lock.js';
export {
  type EventLogRecovery,
  JOURNAL_ONLY_HOOKS,
  type RecoveredTurn,
  type RecoveringTurn,
  type RecoverStoreOptions,
  type RecoveryHooks,
  recoverStore,
  type StoreRecovery,
} from './recovery/recover-store.js';
export type { SettledFile } from './recovery/settle-at-rest.js';
export { DEFAULT_RETENTION_SECONDS } from './retention/retention-window.js';
export {
  type SweepOptions,
  type SweepReport,
  type SweptSession,
  sweepTurnJournals,
} from './retention/sweep-turn-journals.js';
export { openRunWriter } from './run/open-run-writer.js';
export type {
  LlmRequestInput,
  LlmResponseInput,
  LlmUsage,
  OpenRunWriterOptions,
  RecordOptions,
  RunEndInput,
  RunErrorInput,
  RunHeaderInput,
  RunMessage,
  RunMeta,
  RunModelInfo,
  RunOpenReport,
  RunWriterCommonOptions,
  SequencedAck,
  ToolOutputInput,
} from './run/run-inputs.js';
export { runFilePath } from './run/run-path.js';
// Run files and state documents (spec §7, §8, §16).
export type { RunWriter } from './run/run-writer.js';
// A session's journals together, startup recovery and retention (spec §12, §14).
export {
  type OpenSessionJournalsOptions,
  openSessionJournals,
  type SessionJournals,
  sweepStoreTurnJournals,
} from './session/session-journals.js';
export {
  type SessionStateInput,
  type StateDocumentWritten,
  stateDocumentPath,
  type WriteStateCommonOptions,
  type WriteStateDocumentOptions,
  writeStateDocument,
} from './state/state-document.js';
// Copying a store into another through the seam (spec §19.1): `turnjournal export` and `import`.
export { type CopiedEntry, copyStore, type StoreCopy } from './transfer/copy-store.js';
export { openTurnJournal } from './turn/open-turn-journal.js';
// Turn journals (spec §5, §10, §11).
export { newTurnId } from './turn/turn-id.js';
export type { TurnJournal } from './turn/turn-journal.js';
export type {
  OpenTurnJournalOptions,
  SubmitInput,
  SubmitResult,
  TurnJournalAtPath,
  TurnJournalInDirectory,
  TurnJournalInStore,
  TurnJournalWriteOptions,
} from './turn/turn-journal-inputs.js';
