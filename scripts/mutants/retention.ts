import { type Mutant, py, reference } from './mutant.js';

/**
 * Sweeps and compactions that get one rule of spec §14 wrong (issue 12), seen through feature `retention`
 * (adapter.md §5.6): a hand-written sweep and compaction (packages/conformance/test/adapter/mutants/retention.mjs)
 * that break one rule each. Their unbroken version, `retention-handwritten`, passes both retention checks
 * (packages/conformance/test/adapter/broken-adapters.test.ts).
 */
export const RETENTION_MUTANTS: readonly Mutant[] = [
  reference('sweep-default-window', 'TJ-RET-001'),
  reference('sweep-ignores-audit', 'TJ-RET-002'),
  reference('sweep-prunes-young', 'TJ-RET-003'),
  reference('sweep-keeps-partial', 'TJ-RET-004'),
  reference('sweep-reformats', 'TJ-RET-005', 'TJ-COMPAT-004'),
  reference('sweep-no-compacted', 'TJ-RET-006'),
  reference('sweep-per-file-ids', 'TJ-RET-007'),
  reference('sweep-ignores-writer-lock', 'TJ-RET-009'),
  reference('sweep-ignores-dir-lock', 'TJ-RET-010'),
  reference('sweep-drops-unknown', 'TJ-RET-017'),
  reference('sweep-answers-held', 'TJ-CONF-034'),
  reference('sweep-no-writer-lock', 'TJ-RET-008'),
  reference('sweep-unsynced-replace', 'TJ-DUR-009'),
  reference('sweep-no-recheck', 'TJ-RET-015'),
  reference('compact-drops-checkpoint', 'TJ-RET-012'),
  py('compact-at-last-part', 'TJ-RET-021'),
  reference('compact-ignores-window', 'TJ-RET-013'),
  reference('compact-ignores-unfinished', 'TJ-RET-013'),
  reference('compact-renumbers', 'TJ-RET-014'),
  reference('compact-never-expires', 'TJ-RET-018'),
  reference('compact-acks-expired', 'TJ-RET-018'),
  reference('compact-miscounts', 'TJ-CONF-035'),
  reference('compact-trusts-future-ts', 'TJ-RET-019'),
];
