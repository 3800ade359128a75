/**
 * Every mutant of the mutation matrix. Each topic keeps its mutants in a file of its own beside this one (one defect
 * switch per requirement it breaks); this list concatenates them. A mutant name must be unique.
 */
import { BASE_MUTANTS } from './base.js';
import { DURABILITY_MUTANTS } from './durability.js';
import { LIFECYCLE_MUTANTS } from './lifecycle.js';
import { LIVE_MUTANTS } from './live.js';
import type { Mutant } from './mutant.js';
import { READER_MUTANTS } from './reader.js';
import { READER_GENERATED_MUTANTS } from './reader-generated.js';
import { READER_SHAPE_MUTANTS } from './reader-shapes.js';
import { RECOVERY_MUTANTS } from './recovery.js';
import { RETENTION_MUTANTS } from './retention.js';
import { SIBLING_MUTANTS } from './siblings.js';
import { STORE_MUTANTS } from './store.js';

export type { Mutant } from './mutant.js';

/** Every mutant, in the order the matrix runs them. */
export const MUTANTS: readonly Mutant[] = [
  ...BASE_MUTANTS,
  ...DURABILITY_MUTANTS,
  ...READER_MUTANTS,
  ...READER_SHAPE_MUTANTS,
  ...READER_GENERATED_MUTANTS,
  ...LIFECYCLE_MUTANTS,
  ...RECOVERY_MUTANTS,
  ...RETENTION_MUTANTS,
  ...LIVE_MUTANTS,
  ...SIBLING_MUTANTS,
  ...STORE_MUTANTS,
];
