import { type Mutant, py } from './mutant.js';

/**
 * Writer durability and adapter-protocol defects (issue 12) on the Python example: each one a mistake a real writer in
 * another language makes, caught by the writer tier or the protocol checks.
 */
export const DURABILITY_MUTANTS: readonly Mutant[] = [
  py('follow-symlink', 'TJ-DUR-031'),
  py('no-file-type-check', 'TJ-DUR-032'),
  py('no-line-limit', 'TJ-DUR-028'),
  py('no-every-claim', 'TJ-DUR-011'),
  py('group-sync-every-4th', 'TJ-DUR-014'),
  py('submitted-unsynced', 'TJ-DUR-001'),
  py('swallow-write-error', 'TJ-DUR-022'),
  py('truncate-last-on-close', 'TJ-DUR-024'),
  py('banner-on-stdout', 'TJ-CONF-012'),
  py('string-ids', 'TJ-CONF-019'),
  py('exit-on-unknown-op', 'TJ-CONF-015', 'TJ-CONF-022'),
  py('no-levels-claim', 'TJ-CONF-001', 'TJ-CONF-024'),
  py('lock-written-in-place', 'TJ-DUR-029'),
  py('single-write', 'TJ-DUR-002'),
  py('no-truncate-after-failure', 'TJ-DUR-023'),
];
