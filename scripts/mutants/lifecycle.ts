import { type Mutant, py, reference } from './mutant.js';

/**
 * Writers that decide wrong (issue 12), seen through feature `lifecycle` (adapter.md §5.4): hand-written turn and
 * event-log writers (packages/conformance/test/adapter/mutants/lifecycle.mjs) that skip one rule each.
 */
export const LIFECYCLE_MUTANTS: readonly Mutant[] = [
  reference('turn-resubmit-appends', 'TJ-TURN-012'),
  reference('turn-conflict-appended', 'TJ-TURN-003'),
  reference('turn-steps-unchecked', 'TJ-TURN-014'),
  reference('turn-any-session-id', 'TJ-FAM-010'),
  reference('turn-mkdir-unsynced', 'TJ-DUR-008'),
  reference('turn-unreadable-shard-skipped', 'TJ-TURN-017'),
  reference('event-seq-restarts', 'TJ-EVENT-003', 'TJ-EVENT-004'),
  reference('event-seq-from-count', 'TJ-EVENT-003', 'TJ-EVENT-004'),
  reference('event-seq-skips-extensions', 'TJ-EVENT-004'),
  reference('event-concurrent-runs', 'TJ-EVENT-009'),
  reference('event-request-id-reuse', 'TJ-EVENT-010', 'TJ-EVENT-017'),
  reference('event-ack-beyond-log', 'TJ-EVENT-021'),
  reference('event-index-final', 'TJ-EVENT-020'),
  reference('event-index-trusted', 'TJ-EVENT-020'),
  reference('checkpoint-ignores-undo', 'TJ-EVENT-007'),
  reference('checkpoint-runs-no-acks', 'TJ-EVENT-019'),
  reference('checkpoint-epoch-dropped', 'TJ-EVENT-024'),
  reference('checkpoint-epoch-renewed', 'TJ-EVENT-024'),
  reference('split-parts-reversed', 'TJ-EVENT-030'),
  reference('split-part-missing', 'TJ-EVENT-030'),
  reference('split-members-on-every-part', 'TJ-EVENT-030'),
  py('checkpoint-always-split', 'TJ-EVENT-029'),
  reference('run-no-header', 'TJ-RUN-003'),
  reference('run-header-repeated', 'TJ-RUN-004'),
  reference('run-agent-seq-restarts', 'TJ-RUNSEM-010'),
  reference('run-response-own-seq', 'TJ-RUNSEM-011'),
  reference('state-in-place', 'TJ-STATE-005', 'TJ-DUR-009', 'TJ-STORE-006'),
  reference('refusal-as-failure', 'TJ-CONF-032'),
];
