import { type Mutant, onPostgres, reference } from './mutant.js';

/**
 * Record-store writers that break one rule of the seam (spec §19.1), on the reference writer with feature
 * `store-lines` (adapter.md §5.8; packages/conformance/test/adapter/mutants/store-lines.mjs): the harness reads what
 * they hold through `lines`, never from a path. Their unbroken version, `store-lines`, passes the writer tier.
 */
export const STORE_MUTANTS: readonly Mutant[] = [
  reference('store-no-owner', 'TJ-STORE-001'),
  reference('store-lines-drops-last', 'TJ-STORE-002', 'TJ-CONF-052'),
  reference('store-ack-before-append', 'TJ-STORE-003'),
  reference('store-appends-reordered', 'TJ-STORE-004'),
  // The same adapter on PostgreSQL (`--store-lines=postgres://…`), on a server the matrix starts.
  onPostgres(reference('store-pg-ack-before-commit', 'TJ-STORE-022')),
];
