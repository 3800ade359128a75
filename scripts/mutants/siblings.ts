import { type Mutant, py } from './mutant.js';

/**
 * Defects only a sibling of an existing case shows (issue 37), on the Python example: a writer-violation rule that looks
 * for U+2028 but not U+2029 (every older case holding a raw U+2029 holds a U+2028 too), and a reader that keeps tens of
 * bytes per record for the whole read (the records of `reader/bounded-memory` are too few for it to show).
 */
export const SIBLING_MUTANTS: readonly Mutant[] = [
  py('separator-2028-only', 'TJ-FAM-026'),
  py('offset-index', 'TJ-FRAME-033'),
];
