import { type Mutant, py } from './mutant.js';

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
  py('torn-as-line', 'TJ-FRAME-003', 'TJ-FRAME-004'),
  // Families and compatibility (spec §4, §9)
  py('type-case-insensitive', 'TJ-FAM-003'),
  py('no-mixed-families', 'TJ-FAM-006'),
  py('no-unknown-object', 'TJ-FAM-002'),
  py('bad-discriminator-ignored', 'TJ-FAM-023'),
  py('no-invalid-session-id', 'TJ-FAM-012'),
  py('no-session-mismatch', 'TJ-FAM-018'),
  py('reserved-scanned', 'TJ-FAM-020'),
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
  // Event logs and replay (spec §6.5, §15)
  py('no-seq-gap', 'TJ-EVENT-015'),
  py('duplicate-as-regression', 'TJ-EVENT-014'),
  py('regressed-seq-kept', 'TJ-EVENT-013'),
  py('no-abandoned-run', 'TJ-REPLAY-010'),
  py('acks-ignored', 'TJ-REPLAY-015'),
  py('edit-out-of-range-appends', 'TJ-REPLAY-002'),
  py('checkpoint-ignored', 'TJ-REPLAY-001'),
  py('checkpoint-merges', 'TJ-REPLAY-004', 'TJ-REPLAY-007'),
  py('torn-checkpoint-used', 'TJ-REPLAY-006'),
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
  py('plan-ignores-locks', 'TJ-RECOV-002'),
  py('no-pending-finding', 'TJ-AUDIT-007'),
  py('no-malformed-event-finding', 'TJ-AUDIT-009'),
  py('plan-no-user-message', 'TJ-RECOV-003'),
  // State documents (spec §8)
  py('state-bom-rejected', 'TJ-STATE-002'),
  py('no-stale-state', 'TJ-STATE-006'),
];
