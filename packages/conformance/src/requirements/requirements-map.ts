import { fixtureCases } from '../fixtures/fixture-cases.js';
import type { LoadedFixtureFile } from '../fixtures/load-fixtures.js';
import { type Requirement, RequirementsError } from './parse-requirements.js';

/** The traceability map: every requirement with the fixture files that cite it, and what nothing covers yet. */
export interface RequirementsMap {
  /** Spec version. */
  readonly spec: string;
  /** Every requirement in spec order, with the fixture files citing it. */
  readonly requirements: readonly (Requirement & { readonly fixtures: readonly string[] })[];
  /** Ids of MUST-level (MUST, MUST NOT, REQUIRED, SHALL, SHALL NOT) and SHOULD-level requirements no fixture cites. */
  readonly uncovered: { readonly must: readonly string[]; readonly should: readonly string[] };
}

const MUST_LEVELS = new Set(['MUST', 'MUST NOT', 'REQUIRED', 'SHALL', 'SHALL NOT']);
const SHOULD_LEVELS = new Set(['SHOULD', 'SHOULD NOT', 'RECOMMENDED']);

/**
 * Maps requirements to the fixture files citing them. Throws {@link RequirementsError} when a fixture cites an id the
 * spec does not define, since such a citation proves nothing.
 */
export function buildRequirementsMap(
  requirements: readonly Requirement[],
  fixtures: readonly LoadedFixtureFile[],
): RequirementsMap {
  const citing = new Map<string, Set<string>>(requirements.map((r) => [r.id, new Set<string>()]));
  for (const file of fixtures) {
    for (const fixtureCase of fixtureCases(file.content)) {
      for (const id of fixtureCase.requirements) {
        const files = citing.get(id);
        if (files === undefined) {
          throw new RequirementsError(
            `${file.path}: "${fixtureCase.name}" cites ${id}, which the spec does not define`,
          );
        }
        files.add(file.path);
      }
    }
  }
  const withFixtures = requirements.map((r) => ({ ...r, fixtures: [...(citing.get(r.id) ?? [])].sort() }));
  const uncoveredAt = (levels: Set<string>) =>
    withFixtures.filter((r) => levels.has(r.level) && r.fixtures.length === 0).map((r) => r.id);
  return {
    spec: 'v1',
    requirements: withFixtures,
    uncovered: { must: uncoveredAt(MUST_LEVELS), should: uncoveredAt(SHOULD_LEVELS) },
  };
}
