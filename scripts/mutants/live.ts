import { type Mutant, reference, withTimeout } from './mutant.js';

/**
 * Live sessions that get one rule of spec §18 wrong (issues 12 and 15), seen through feature `live` (adapter.md §5.7):
 * a hand-written live session over the reference writers (packages/conformance/test/adapter/mutants/live.mjs) that
 * breaks one rule each. Its unbroken version, `live-handwritten`, passes every live check
 * (packages/conformance/test/adapter/broken-adapters.test.ts).
 */
export const LIVE_MUTANTS: readonly Mutant[] = [
  reference('live-own-turn-ids', 'TJ-LIVE-001'),
  reference('live-retry-restarts', 'TJ-LIVE-002'),
  reference('live-tool-drops-segment', 'TJ-LIVE-004'),
  reference('live-tool-result-uncommitted', 'TJ-LIVE-004'),
  reference('live-subscribe-repeats', 'TJ-LIVE-009'),
  reference('live-ahead-silent', 'TJ-LIVE-010'),
  reference('live-skips-gap', 'TJ-LIVE-018'),
  reference('live-stale-view', 'TJ-LIVE-013'),
  reference('live-ack-unchecked', 'TJ-LIVE-014'),
  reference('live-ack-beyond-log', 'TJ-LIVE-014'),
  reference('live-auto-ack', 'TJ-EVENT-012'),
  reference('live-reads-any-session', 'TJ-FAM-011'),
  reference('live-never-expires', 'TJ-LIVE-015'),
  reference('live-restart-keeps-runs', 'TJ-LIVE-016'),
  reference('live-restart-interrupts-all', 'TJ-LIVE-016'),
  reference('live-restart-drops-partial', 'TJ-LIVE-017'),
  reference('live-restart-forgets-user', 'TJ-LIVE-019'),
  reference('live-restart-drops-long-partial', 'TJ-LIVE-017'),
  reference('live-restart-drops-long-user', 'TJ-LIVE-019'),
  reference('live-started-early', 'TJ-LIVE-003'),
  reference('live-delivers-unsynced', 'TJ-LIVE-008'),
  reference('live-window-only', 'TJ-LIVE-012'),
  reference('live-cuts-off-bursts', 'TJ-LIVE-030'),
  reference('live-turn-first', 'TJ-LIVE-005'),
  reference('live-unsynced-tools', 'TJ-LIVE-006'),
  reference('live-syncs-every-delta', 'TJ-LIVE-007'),
  reference('live-busy-fails', 'TJ-CONF-040'),
  // The requests queued behind a waiting subscription go unanswered until they time out: 10 s rather than the default
  // 30 s, still over ten times the slowest request of these checks when quiet (the 6,000-record catch-up).
  withTimeout(reference('live-subscribe-blocks', 'TJ-CONF-041'), 10_000),
  reference('live-ack-unsynced', 'TJ-CONF-042'),
  reference('live-snapshot-bare-messages', 'TJ-CONF-043'),
  reference('live-epoch-ignored', 'TJ-LIVE-020'),
  reference('live-snapshot-no-epoch', 'TJ-LIVE-021'),
  reference('live-ack-repeats', 'TJ-LIVE-056'),
  reference('live-ack-any-client-id', 'TJ-LIVE-057'),
  reference('live-client-id-bound-unstated', 'TJ-CONF-070'),
  reference('live-system-same-id', 'TJ-LIVE-062'),
  reference('live-system-first', 'TJ-LIVE-062'),
  reference('live-system-unsynced', 'TJ-LIVE-062'),
  reference('live-durable-one-delta', 'TJ-LIVE-058'),
  reference('live-segments-per-token', 'TJ-LIVE-059'),
  reference('live-tokens-follow-session', 'TJ-LIVE-066', 'TJ-LIVE-058'),
  reference('live-tokens-forgotten', 'TJ-LIVE-066'),
  reference('live-tokens-ignored', 'TJ-CONF-071'),
  reference('live-snapshot-running-tools', 'TJ-LIVE-063'),
  reference('live-retry-other-content', 'TJ-LIVE-034'),
  reference('live-reserved-session-ids', 'TJ-LIVE-037'),
  reference('live-cancel-not-partial', 'TJ-LIVE-035'),
  reference('live-cancel-reason-lost', 'TJ-LIVE-035'),
];
