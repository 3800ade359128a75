/**
 * `@turnjournal/writer`: the durable writer of turnjournal stores (spec §11, §12, §14): crash-safe appends with
 * locks and torn-tail repair, the turn lifecycle API, event-log and run writers, startup recovery and retention.
 * @module
 */
export * from './append/append-file.js';
export * from './append/encode-record.js';
export * from './append/repair-torn-tail.js';
export * from './errors.js';
export * from './event/compact-event-log.js';
export * from './event/event-log.js';
export * from './event/event-log-inputs.js';
export * from './event/open-event-log.js';
export * from './fs/durable-ops.js';
export * from './fs/file-system.js';
export * from './fs/lock.js';
export * from './recovery/recover-store.js';
export * from './retention/retention-window.js';
export * from './retention/sweep-turn-journals.js';
export * from './run/open-run-writer.js';
export * from './run/run-inputs.js';
export * from './run/run-path.js';
export * from './run/run-writer.js';
export * from './session/session-journals.js';
export * from './state/state-document.js';
export * from './turn/turn-id.js';
export * from './turn/turn-journal.js';
