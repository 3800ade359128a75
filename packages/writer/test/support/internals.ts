// Every module of the writer's sources in one place, for tests that exercise internals (durable ops, locks, the
// encoder, the file-system layer). The published entries (src/index.ts, src/file-system-entry.ts) export a chosen
// list; tests are not limited to it.
export * from '../../src/append/append-file.js';
export * from '../../src/append/encode-record.js';
export * from '../../src/append/repair-torn-tail.js';
export * from '../../src/errors.js';
export * from '../../src/event/compact-event-log.js';
export * from '../../src/event/event-log.js';
export * from '../../src/event/event-log-inputs.js';
export * from '../../src/event/open-event-log.js';
export * from '../../src/fs/durable-ops.js';
export * from '../../src/fs/file-system.js';
export * from '../../src/fs/lock.js';
export * from '../../src/recovery/recover-store.js';
export * from '../../src/retention/retention-window.js';
export * from '../../src/retention/sweep-turn-journals.js';
export * from '../../src/run/open-run-writer.js';
export * from '../../src/run/run-inputs.js';
export * from '../../src/run/run-path.js';
export * from '../../src/run/run-writer.js';
export * from '../../src/session/session-journals.js';
export * from '../../src/state/state-document.js';
export * from '../../src/turn/open-turn-journal.js';
export * from '../../src/turn/turn-id.js';
export * from '../../src/turn/turn-journal.js';
export * from '../../src/turn/turn-journal-inputs.js';
