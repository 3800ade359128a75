import { ConformanceError } from '../errors.js';
import { fixtureCases } from '../fixtures/fixture-cases.js';
import type { LoadedFixtureFile } from '../fixtures/load-fixtures.js';
import type { Requirement } from './parse-requirements.js';

/** One requirement in the traceability map, with what covers it (TJ-CONF-006). */
export interface MappedRequirement extends Requirement {
  /** Fixture files with a case citing the id. */
  readonly fixtures: readonly string[];
  /** Test files citing the id. */
  readonly tests: readonly string[];
  /**
   * Why the requirement is verified by review rather than by a machine, when it is listed in the manual list
   * (`spec/v1/requirements-manual.json`); absent otherwise.
   */
  readonly manual?: string;
}

/** The traceability map: every requirement with the fixture files that cite it, and what nothing covers yet. */
export interface RequirementsMap {
  /** Spec version. */
  readonly spec: string;
  /** Every requirement in spec order, with the fixture files and the test files citing it. */
  readonly requirements: readonly MappedRequirement[];
  /**
   * Ids of MUST-level (MUST, MUST NOT, REQUIRED, SHALL, SHALL NOT) and SHOULD-level requirements that no fixture or
   * test cites and that the manual list does not justify.
   */
  readonly uncovered: { readonly must: readonly string[]; readonly should: readonly string[] };
}

/** Levels whose requirements CI refuses to leave uncovered (TJ-CONF-006). */
export const MUST_LEVELS: ReadonlySet<string> = new Set(['MUST', 'MUST NOT', 'REQUIRED', 'SHALL', 'SHALL NOT']);
/** Levels whose uncovered requirements are warnings (TJ-CONF-006). */
export const SHOULD_LEVELS: ReadonlySet<string> = new Set(['SHOULD', 'SHOULD NOT', 'RECOMMENDED']);

/**
 * Maps requirements to the fixture files and test files citing them. Throws a {@link ConformanceError} `invalid_requirements` when a fixture
 * cites an id the spec does not define, since such a citation proves nothing. Test citations of unknown ids are
 * ignored (tests use made-up ids to test the parser). `manual` maps ids verified by review to the reason; it throws
 * a {@link ConformanceError} `invalid_requirements` on an unknown id or an empty reason, so that the list cannot silently go stale.
 */
export function buildRequirementsMap(
  requirements: readonly Requirement[],
  fixtures: readonly LoadedFixtureFile[],
  testCitations: ReadonlyMap<string, readonly string[]> = new Map(),
  manual: ReadonlyMap<string, string> = new Map(),
): RequirementsMap {
  const known = new Set(requirements.map((r) => r.id));
  for (const [id, reason] of manual) {
    if (!known.has(id))
      throw new ConformanceError('invalid_requirements', `the manual list names ${id}, which the spec does not define`);
    if (reason.trim() === '')
      throw new ConformanceError('invalid_requirements', `the manual list gives no reason for ${id}`);
  }
  const citing = new Map<string, Set<string>>(requirements.map((r) => [r.id, new Set<string>()]));
  for (const file of fixtures) {
    for (const fixtureCase of fixtureCases(file.content)) {
      for (const id of fixtureCase.requirements) {
        const files = citing.get(id);
        if (files === undefined) {
          throw new ConformanceError(
            'invalid_requirements',
            `${file.path}: "${fixtureCase.name}" cites ${id}, which the spec does not define`,
          );
        }
        files.add(file.path);
      }
    }
  }
  const withFixtures: MappedRequirement[] = requirements.map((r) => {
    const reason = manual.get(r.id);
    return {
      ...r,
      fixtures: [...(citing.get(r.id) ?? [])].sort(),
      tests: [...(testCitations.get(r.id) ?? [])].sort(),
      ...(reason === undefined ? {} : { manual: reason }),
    };
  });
  const uncoveredAt = (levels: ReadonlySet<string>) =>
    withFixtures
      .filter((r) => levels.has(r.level) && r.fixtures.length === 0 && r.tests.length === 0 && r.manual === undefined)
      .map((r) => r.id);
  return {
    spec: 'v1',
    requirements: withFixtures,
    uncovered: { must: uncoveredAt(MUST_LEVELS), should: uncoveredAt(SHOULD_LEVELS) },
  };
}

const CITATION = /TJ-([A-Z]+)-(\d{3})(?:\.\.(?:-)?(\d{3}))?/g;

/**
 * The requirement ids a text cites (the coverage check passes test code with its comments blanked): `TJ-FRAME-012`, and ranges written
 * `TJ-FRAME-012..014` (or `TJ-RECOV-002, -003` is not a range: each id must be spelled out or ranged).
 */
export function citedRequirementIds(text: string): string[] {
  const ids = new Set<string>();
  for (const match of text.matchAll(CITATION)) {
    const [, area, from, to] = match;
    const first = Number(from);
    const last = to === undefined ? first : Number(to);
    for (let n = first; n <= last && n - first < 100; n += 1) ids.add(`TJ-${area}-${String(n).padStart(3, '0')}`);
  }
  return [...ids];
}
