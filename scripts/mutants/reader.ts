import { type Mutant, py, reference, withTimeout } from './mutant.js';

/**
 * Reader defects (issue 12) on the Python example: each one the mistake a reader written from the spec could make
 * (a strict parser, a forgotten finding, an off-by-one cursor), caught by the store fixture cases that cite it.
 */
export const READER_MUTANTS: readonly Mutant[] = [
  // Framing (spec §3)
  py('no-bom-skip', 'TJ-FRAME-012'),
  py('crlf-is-damage', 'TJ-FRAME-013'),
  py('blank-is-damage', 'TJ-FRAME-014'),
  py('nul-not-damage', 'TJ-FRAME-028'),
  py('no-salvage', 'TJ-FRAME-026'),
  py('damage-raises', 'TJ-FRAME-018'),
  py('strict-reads-on', 'TJ-FRAME-022'),
  py('prefix-reads-on', 'TJ-FRAME-021'),
  py('oversized-as-malformed', 'TJ-FRAME-032'),
  py('utf8-replace', 'TJ-FRAME-015'),
  py('dup-member-first', 'TJ-FRAME-011'),
  py('default-prefix', 'TJ-FRAME-020'),
  py('strict-failure-no-line', 'TJ-FRAME-023'),
  py('torn-as-line', 'TJ-FRAME-003', 'TJ-FRAME-004'),
  // Pre-allocated space (spec §3.8), on the reference reader: space reported as a torn tail, and a torn tail hidden
  // by the space after it.
  reference('space-as-torn-tail', 'TJ-FRAME-036'),
  reference('nuls-hide-torn-tail', 'TJ-FRAME-030'),
  py('space-as-torn-tail', 'TJ-FRAME-036'),
  // Families and compatibility (spec §4, §9)
  py('type-case-insensitive', 'TJ-FAM-003'),
  py('no-mixed-families', 'TJ-FAM-006'),
  py('no-unknown-object', 'TJ-FAM-002'),
  py('bad-discriminator-ignored', 'TJ-FAM-023'),
  py('no-invalid-session-id', 'TJ-FAM-012'),
  py('no-session-mismatch', 'TJ-FAM-018'),
  py('reserved-scanned', 'TJ-FAM-020'),
  py('reader-follows-links', 'TJ-FAM-025'),
  // The read that opens the FIFO blocks until it times out: 10 s rather than the default 30 s.
  withTimeout(py('reader-opens-fifo', 'TJ-FAM-024'), 10_000),
  py('no-run-id-mismatch', 'TJ-FAM-019'),
  py('no-invalid-run-id', 'TJ-FAM-013'),
  py('reject-unknown-type', 'TJ-COMPAT-005'),
  py('extension-reported', 'TJ-COMPAT-006'),
  py('type-before-version', 'TJ-COMPAT-014'),
  py('reject-unknown-members', 'TJ-COMPAT-001'),
  // Turn derivation (spec §10)
  py('no-dedupe', 'TJ-DERIVE-011'),
  py('no-orphan-finding', 'TJ-DERIVE-012'),
  py('interrupted-wins', 'TJ-DERIVE-010'),
  py('removed-turns-kept', 'TJ-DERIVE-006'),
  py('no-event-after-terminal', 'TJ-DERIVE-009'),
  py('first-shard-only', 'TJ-DERIVE-004'),
  py('extension-event-counts', 'TJ-DERIVE-005'),
  py('terminal-member-decides', 'TJ-TURN-010'),
  py('no-conflicting-duplicate', 'TJ-DERIVE-013'),
  // The first record read represents its event name (TJ-DERIVE-013), visible with feature `representatives` (issue 37).
  py('first-record-represents', 'TJ-DERIVE-013'),
  reference('first-record-represents', 'TJ-DERIVE-013'),
  // Feature representatives claimed, the member never answered (TJ-CONF-050).
  py('representatives-omitted', 'TJ-CONF-050'),
  // Event logs and replay (spec §6.5, §15)
  py('no-seq-gap', 'TJ-EVENT-015'),
  py('duplicate-as-regression', 'TJ-EVENT-014'),
  py('regressed-seq-kept', 'TJ-EVENT-013'),
  py('no-epoch-conflict', 'TJ-EVENT-026'),
  py('epoch-not-cleared', 'TJ-EVENT-025'),
  py('replay-epoch-ignored', 'TJ-REPLAY-018'),
  // Event logs read in prefix mode (spec §6.8), on the reference reader: the mode ignored for event logs, as the reference
  // did before §6.8, and a prefix read that trusts a checkpoint written after the first damaged line.
  reference('event-prefix-ignored', 'TJ-EVENT-031'),
  reference('prefix-trusts-checkpoint', 'TJ-EVENT-032'),
  py('no-abandoned-run', 'TJ-REPLAY-010'),
  py('acks-ignored', 'TJ-REPLAY-015'),
  py('edit-out-of-range-appends', 'TJ-REPLAY-002'),
  py('checkpoint-ignored', 'TJ-REPLAY-001'),
  py('checkpoint-merges', 'TJ-REPLAY-004', 'TJ-REPLAY-007'),
  py('torn-checkpoint-used', 'TJ-REPLAY-006'),
  py('split-checkpoint-ignored', 'TJ-REPLAY-019'),
  py('incomplete-parts-used', 'TJ-REPLAY-019', 'TJ-REPLAY-020'),
  py('invalid-checkpoint-resets', 'TJ-REPLAY-008'),
  py('overlay-any-message-id', 'TJ-REPLAY-009'),
  py('checkpoint-closes-segment', 'TJ-REPLAY-011'),
  py('replay-no-ahead', 'TJ-REPLAY-014'),
  py('replay-no-compacted', 'TJ-REPLAY-013'),
  py('replay-inclusive', 'TJ-REPLAY-012'),
  // Runs (spec §7, §16)
  py('no-record-after-run-end', 'TJ-RUNSEM-002'),
  py('no-llm-seq-duplicate', 'TJ-RUNSEM-006'),
  py('agent-gap-reported', 'TJ-RUNSEM-008'),
  py('no-agent-regression', 'TJ-RUNSEM-007'),
  py('no-unpaired-request', 'TJ-RUNSEM-004'),
  py('no-unpaired-response', 'TJ-RUNSEM-005'),
  py('no-missing-header', 'TJ-RUN-005'),
  // Audit and recovery plan (spec §12, §13)
  py('no-interrupted-finding', 'TJ-AUDIT-008'),
  py('audit-repairs-tail', 'TJ-AUDIT-010'),
  py('kebab-codes', 'TJ-AUDIT-001'),
  py('findings-without-line', 'TJ-AUDIT-003'),
  py('plan-ignores-locks', 'TJ-RECOV-002'),
  py('plan-takes-locks', 'TJ-RECOV-001'),
  py('no-pending-finding', 'TJ-AUDIT-007'),
  py('no-malformed-event-finding', 'TJ-AUDIT-009'),
  py('plan-no-user-message', 'TJ-RECOV-003'),
  // State documents (spec §8)
  py('state-bom-rejected', 'TJ-STATE-002'),
  py('no-stale-state', 'TJ-STATE-006'),
];
