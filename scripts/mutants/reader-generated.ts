import { type Mutant, py } from './mutant.js';

/**
 * Reader defects only generated stores show (issue 37, TJ-CONF-060), on the Python example: each passes every store
 * fixture case and fails the generated class named beside it.
 */
export const READER_GENERATED_MUTANTS: readonly Mutant[] = [
  // reader/generated-event-log: an extension or unknown record between two deltas closes the open segment, as if the
  // overlay were the deltas at the very tail (no fixture puts one inside an open segment).
  py('extension-closes-segment', 'TJ-REPLAY-009'),
  // reader/generated-compacted: a seq below the log's first accepted seq is dropped without a finding, taken for a
  // leftover of compaction (no fixture's log that begins past seq 0 has a line below its first seq).
  py('below-first-silent', 'TJ-EVENT-014'),
  // reader/generated-sizes: the line-size limit counted in characters, not bytes (no fixture has a line of multi-byte
  // characters near its limit).
  py('limit-in-characters', 'TJ-FRAME-031'),
];
