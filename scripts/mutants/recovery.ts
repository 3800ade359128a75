import { type Mutant, reference } from './mutant.js';

/**
 * Startup recoveries that get one rule wrong (issue 12), seen through feature `recovery` (adapter.md §5.5): a
 * hand-written recovery (packages/conformance/test/adapter/mutants/recovery.mjs) that breaks one rule each.
 */
export const RECOVERY_MUTANTS: readonly Mutant[] = [
  reference('recover-wrong-reason', 'TJ-RECOV-006'),
  reference('recover-completes', 'TJ-RECOV-004'),
  reference('recover-twice', 'TJ-RECOV-009'),
  reference('recover-no-repair', 'TJ-RECOV-010'),
  reference('recover-ignores-locks', 'TJ-RECOV-013'),
  reference('recover-ends-runs', 'TJ-RECOV-012'),
  reference('recover-unsynced', 'TJ-RECOV-007'),
  reference('recover-silent', 'TJ-CONF-033'),
];
