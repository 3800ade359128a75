import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ConformanceError } from '../errors.js';
import { loadFixtures } from '../fixtures/load-fixtures.js';
import { parseRequirements } from './parse-requirements.js';
import {
  buildRequirementsMap,
  citedRequirementIds,
  MUST_LEVELS,
  type RequirementsMap,
  SHOULD_LEVELS,
} from './requirements-map.js';
import { stripComments } from './strip-comments.js';

/** Where the manual list lives, from the repository root. */
export const MANUAL_REQUIREMENTS_PATH = 'spec/v1/requirements-manual.json';

/** Longest reason the manual list accepts: one line, because a long argument belongs in the spec or a review. */
const MAX_REASON_LENGTH = 240;

/**
 * Which test files (`packages/<pkg>/test/**\/*.test.ts`) cite each requirement id in their code: test names and the
 * data the tests run and assert on (string literals), never comments, since a comment checks nothing. Paths are
 * relative to `root` with `/` separators, sorted, so the generated map is stable across machines.
 */
export function collectTestCitations(root: string): Map<string, string[]> {
  const citations = new Map<string, string[]>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.test.ts')) {
        const file = relative(root, path).split(sep).join('/');
        for (const id of citedRequirementIds(stripComments(readFileSync(path, 'utf8'))))
          citations.set(id, [...(citations.get(id) ?? []), file]);
      }
    }
  };
  const packages = join(root, 'packages');
  if (!existsSync(packages)) return citations;
  for (const pkg of readdirSync(packages).sort()) {
    const tests = join(packages, pkg, 'test');
    if (existsSync(tests)) visit(tests);
  }
  return citations;
}

/**
 * Reads the manual list: requirement ids verified by review, each with a one-line reason. The file is
 * `{"description": "…", "requirements": {"TJ-X-001": "why no machine can check it"}}`; a missing file is an empty list.
 * Throws a {@link ConformanceError} `invalid_requirements` on any other shape, so that a typo never hides a requirement.
 */
export function loadManualRequirements(path: string): Map<string, string> {
  if (!existsSync(path)) return new Map();
  let content: unknown;
  try {
    content = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConformanceError('invalid_requirements', `${path}: not valid JSON (${(error as Error).message})`);
  }
  const entries =
    typeof content === 'object' && content !== null && !Array.isArray(content)
      ? (content as { requirements?: unknown }).requirements
      : undefined;
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) {
    throw new ConformanceError(
      'invalid_requirements',
      `${path}: expected an object with a "requirements" object of id → reason`,
    );
  }
  const manual = new Map<string, string>();
  for (const [id, reason] of Object.entries(entries)) {
    if (!/^TJ-[A-Z]+-\d{3}$/.test(id))
      throw new ConformanceError('invalid_requirements', `${path}: "${id}" is not a requirement id`);
    if (
      typeof reason !== 'string' ||
      reason.trim() === '' ||
      /[\r\n]/.test(reason) ||
      reason.length > MAX_REASON_LENGTH
    ) {
      throw new ConformanceError(
        'invalid_requirements',
        `${path}: the reason for ${id} must be one non-empty line of at most ${MAX_REASON_LENGTH} characters`,
      );
    }
    manual.set(id, reason);
  }
  return manual;
}

/**
 * The requirements map of a repository checkout: requirements from `spec/v1/spec.md` and `spec/v1/adapter.md`, fixture citations from
 * `fixtures/`, test citations from `packages/*\/test` and the manual list. The generator writes it to
 * `spec/v1/requirements.json`; the coverage check builds it afresh, so a stale generated file cannot hide a gap.
 */
export function buildRepositoryRequirementsMap(root: string): RequirementsMap {
  const specPath = join(root, 'spec/v1/spec.md');
  if (!existsSync(specPath)) throw new ConformanceError('invalid_requirements', `${specPath} is missing`);
  const requirements = parseRequirements(readFileSync(specPath, 'utf8'));
  // The adapter protocol is a companion document of the spec; its requirements (TJ-CONF-018 on) count the same.
  const adapterPath = join(root, 'spec/v1/adapter.md');
  if (existsSync(adapterPath)) {
    const known = new Set(requirements.map((r) => r.id));
    for (const requirement of parseRequirements(readFileSync(adapterPath, 'utf8'))) {
      if (known.has(requirement.id))
        throw new ConformanceError(
          'invalid_requirements',
          `${requirement.id} is defined in both spec.md and adapter.md`,
        );
      requirements.push({ ...requirement, section: `adapter.md ${requirement.section}` });
    }
  }
  return buildRequirementsMap(
    requirements,
    loadFixtures(join(root, 'fixtures')),
    collectTestCitations(root),
    loadManualRequirements(join(root, MANUAL_REQUIREMENTS_PATH)),
  );
}

/** How the requirements of one level are covered; each requirement is counted once, by its strongest evidence. */
export interface LevelCoverage {
  /** Requirements with at least one fixture case. */
  readonly fixtures: number;
  /** Requirements with no fixture case but at least one citing test. */
  readonly tests: number;
  /** Requirements with neither, verified by review (the manual list). */
  readonly manual: number;
  /** Requirements with none of the above. */
  readonly uncovered: number;
}

/** The outcome of the coverage check (TJ-CONF-006). */
export interface CoverageReport {
  /** Coverage per level, in the order of {@link REQUIREMENT_LEVELS_IN_REPORT}. */
  readonly levels: Readonly<Record<string, LevelCoverage>>;
  /** MUST-level ids nothing covers: each fails the check. */
  readonly errors: readonly string[];
  /** SHOULD-level ids nothing covers: each is a warning. */
  readonly warnings: readonly string[];
  /** Manual ids that are also covered by a fixture or a test: the manual entry can go. */
  readonly redundantManual: readonly string[];
  /** 0 when no MUST-level requirement is uncovered, 1 otherwise. */
  readonly exitCode: 0 | 1;
}

/** The levels the report lists, strongest first. */
export const REQUIREMENT_LEVELS_IN_REPORT = ['MUST', 'MUST NOT', 'SHOULD', 'SHOULD NOT', 'MAY'] as const;

/**
 * Checks a requirements map against TJ-CONF-006: every MUST and MUST NOT requirement needs a fixture case, a citing
 * test or a manual justification (an error otherwise, exit code 1); an uncovered SHOULD or SHOULD NOT is a warning.
 */
export function checkCoverage(map: RequirementsMap): CoverageReport {
  const levels: Record<string, { fixtures: number; tests: number; manual: number; uncovered: number }> = {};
  const redundantManual: string[] = [];
  for (const r of map.requirements) {
    const row = levels[r.level] ?? { fixtures: 0, tests: 0, manual: 0, uncovered: 0 };
    levels[r.level] = row;
    if (r.fixtures.length > 0) row.fixtures += 1;
    else if (r.tests.length > 0) row.tests += 1;
    else if (r.manual !== undefined) row.manual += 1;
    else row.uncovered += 1;
    if (r.manual !== undefined && (r.fixtures.length > 0 || r.tests.length > 0)) redundantManual.push(r.id);
  }
  const uncovered = (set: ReadonlySet<string>) =>
    map.requirements
      .filter((r) => set.has(r.level) && r.fixtures.length === 0 && r.tests.length === 0 && r.manual === undefined)
      .map((r) => r.id);
  const errors = uncovered(MUST_LEVELS);
  return {
    levels,
    errors,
    warnings: uncovered(SHOULD_LEVELS),
    redundantManual,
    exitCode: errors.length > 0 ? 1 : 0,
  };
}

/** The human-readable text of a coverage report: a table per level, then the errors and warnings with their text. */
export function formatCoverageReport(map: RequirementsMap, report: CoverageReport): string {
  const lines = [
    'requirement coverage (spec v1, TJ-CONF-006)',
    '',
    'level        total  fixtures  tests  manual  uncovered',
  ];
  const order = [
    ...REQUIREMENT_LEVELS_IN_REPORT,
    ...Object.keys(report.levels).filter((l) => !(REQUIREMENT_LEVELS_IN_REPORT as readonly string[]).includes(l)),
  ];
  for (const level of order) {
    const row = report.levels[level];
    if (row === undefined) continue;
    const total = row.fixtures + row.tests + row.manual + row.uncovered;
    lines.push(
      `${level.padEnd(11)}  ${String(total).padStart(5)}  ${String(row.fixtures).padStart(8)}  ${String(row.tests).padStart(5)}  ${String(row.manual).padStart(6)}  ${String(row.uncovered).padStart(9)}`,
    );
  }
  lines.push('(a requirement counts once, by its first coverage in this order; MAY requirements need none)');
  const describe = (id: string) => {
    const r = map.requirements.find((x) => x.id === id);
    return r === undefined ? `  ${id}` : `  ${id} ${r.level} [${r.section}] ${r.text.slice(0, 120)}`;
  };
  if (report.warnings.length > 0) {
    lines.push(
      '',
      `warning: ${report.warnings.length} SHOULD-level requirement(s) have no fixture, test or manual entry:`,
    );
    lines.push(...report.warnings.map(describe));
  }
  if (report.redundantManual.length > 0) {
    lines.push(
      '',
      `note: manual entries that a fixture or test now covers (remove them): ${report.redundantManual.join(', ')}`,
    );
  }
  if (report.errors.length > 0) {
    lines.push('', `error: ${report.errors.length} MUST-level requirement(s) have no fixture, test or manual entry:`);
    lines.push(...report.errors.map(describe));
    lines.push('', 'Add a fixture case or a test that checks and cites each id (see spec/README.md, "Coverage").');
  } else {
    lines.push('', 'every MUST and MUST NOT requirement is covered');
  }
  return `${lines.join('\n')}\n`;
}
