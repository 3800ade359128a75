import { describe } from 'vitest';
import { defineCrashRounds } from '../support/crash.js';

// Real child processes killed with SIGKILL in the middle of append streams, in `every` and `group` mode (see
// crashRound in ../support/crash.ts for every check). SIGKILL does not lose page-cache data: this covers process
// crashes, not power loss (the simulated file system of the conformance kit covers that).
// Rounds: TJ_CRASH_ROUNDS (default 15 per suite); seed: TJ_CRASH_SEED (printed, and in every failure message).
describe('SIGKILL crashes of a raw AppendFile of event records', () => {
  defineCrashRounds(
    'raw',
    15,
    'every acknowledged record survives once and in order, survivors are a gap-free prefix plus at most a torn tail, a new writer takes the stale lock over, repairs the tail and appends cleanly (TJ-DUR-003, TJ-DUR-004, TJ-DUR-005, TJ-DUR-006, TJ-DUR-014, TJ-DUR-019, TJ-DUR-024)',
  );
});
