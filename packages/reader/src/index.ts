/**
 * `@turnjournal/reader`: the streaming tolerant reader of turnjournal stores. Framing (spec §3) is complete: line
 * splitting, decoding, glued-record salvage and recovery modes. Derivation, audit, recovery plan and replay follow.
 * @module
 */
export * from './audit/audit-store.js';
export * from './audit/plan-recovery.js';
export * from './errors.js';
export * from './event/fold-event-log.js';
export * from './event/recover-event-log.js';
export * from './event/replay.js';
export * from './event/run-index.js';
export * from './event/scan-event-runs.js';
export * from './event/seek-event-seq.js';
export * from './framing/decode-line.js';
export * from './framing/line-splitter.js';
export * from './framing/read-journal.js';
export * from './report/build-report.js';
export * from './report/excerpt.js';
export * from './run/fold-run.js';
export * from './run/read-run.js';
export * from './state/check-stale-state.js';
export * from './state/read-state.js';
export * from './store/check-store.js';
export * from './store/discover-store.js';
export * from './store/finding-sink.js';
export * from './store/identifiers.js';
export * from './store/lock-status.js';
export * from './turn/canonical-json.js';
export * from './turn/derive-turns.js';
export * from './turn/own-string.js';
export * from './turn/representative.js';
