// Tests of the coverage gate (scripts/check-coverage.ts, `pnpm check:coverage`), which enforces TJ-CONF-006 in CI.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  buildRepositoryRequirementsMap,
  buildRequirementsMap,
  checkCoverage,
  formatCoverageReport,
  loadManualRequirements,
  MANUAL_REQUIREMENTS_PATH,
  parseRequirements,
} from '../support/internals.js';

const repo = join(import.meta.dirname, '../../../..');

const SPEC = [
  '## 1. Things',
  '- **TJ-AA-001** A writer MUST do one thing.',
  '- **TJ-AA-002** A writer MUST NOT do another.',
  '- **TJ-AA-003** A reader SHOULD do a third.',
  '- **TJ-AA-004** A revision MUST NOT break things.',
  '- **TJ-AA-005** A reader MAY do a fourth.',
].join('\n');

/** A minimal repository: the spec above, no fixtures, test files citing the given ids, and a manual list. */
function miniRepo(options: { cited: string[]; manual?: Record<string, string> }): string {
  const root = mkdtempSync(join(tmpdir(), 'tj-coverage-'));
  mkdirSync(join(root, 'spec/v1'), { recursive: true });
  mkdirSync(join(root, 'fixtures'), { recursive: true });
  mkdirSync(join(root, 'packages/x/test/deep'), { recursive: true });
  writeFileSync(join(root, 'spec/v1/spec.md'), SPEC);
  writeFileSync(
    join(root, 'packages/x/test/deep/a.test.ts'),
    options.cited.map((id) => `it('checks ${id}', () => {});`).join('\n'),
  );
  // A helper that is not a test file never counts.
  writeFileSync(join(root, 'packages/x/test/helper.ts'), '// TJ-AA-001 TJ-AA-002 TJ-AA-003 TJ-AA-004\n');
  if (options.manual !== undefined)
    writeFileSync(
      join(root, MANUAL_REQUIREMENTS_PATH),
      JSON.stringify({ description: 'x', requirements: options.manual }),
    );
  return root;
}

async function runCheck(root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [join(repo, 'node_modules/tsx/dist/cli.mjs'), join(repo, 'scripts/check-coverage.ts'), '--root', root],
      { timeout: 60_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the coverage gate (TJ-CONF-006)', () => {
  it('fails on every uncovered MUST and MUST NOT, warns on an uncovered SHOULD, and counts each level', () => {
    const requirements = parseRequirements(SPEC);
    const map = buildRequirementsMap(
      requirements,
      [],
      new Map([['TJ-AA-001', ['packages/x/test/a.test.ts']]]),
      new Map([['TJ-AA-004', 'governs revisions of the spec, checked when one is reviewed']]),
    );
    expect(map.uncovered).toEqual({ must: ['TJ-AA-002'], should: ['TJ-AA-003'] });
    const report = checkCoverage(map);
    expect(report.exitCode).toBe(1);
    expect(report.errors).toEqual(['TJ-AA-002']);
    expect(report.warnings).toEqual(['TJ-AA-003']);
    expect(report.levels).toEqual({
      MUST: { fixtures: 0, tests: 1, manual: 0, uncovered: 0 },
      'MUST NOT': { fixtures: 0, tests: 0, manual: 1, uncovered: 1 },
      SHOULD: { fixtures: 0, tests: 0, manual: 0, uncovered: 1 },
      MAY: { fixtures: 0, tests: 0, manual: 0, uncovered: 1 },
    });
    const text = formatCoverageReport(map, report);
    expect(text).toMatch(/error: 1 MUST-level requirement/);
    expect(text).toMatch(/TJ-AA-002 MUST NOT \[1\. Things\]/);
    expect(text).toMatch(/warning: 1 SHOULD-level requirement/);
    // Covered, the same map passes; a manual entry that a test now covers is pointed out for removal.
    const covered = buildRequirementsMap(
      requirements,
      [],
      new Map([
        ['TJ-AA-001', ['a.test.ts']],
        ['TJ-AA-002', ['a.test.ts']],
        ['TJ-AA-004', ['a.test.ts']],
      ]),
      new Map([['TJ-AA-004', 'reason']]),
    );
    expect(checkCoverage(covered)).toMatchObject({
      exitCode: 0,
      errors: [],
      warnings: ['TJ-AA-003'],
      redundantManual: ['TJ-AA-004'],
    });
  });

  it('refuses a manual list that names an unknown id, gives no reason, or spreads a reason over lines', () => {
    const requirements = parseRequirements(SPEC);
    expect(() => buildRequirementsMap(requirements, [], new Map(), new Map([['TJ-ZZ-001', 'x']]))).toThrow(
      expect.objectContaining({ name: 'ConformanceError', code: 'invalid_requirements' }),
    );
    expect(() => buildRequirementsMap(requirements, [], new Map(), new Map([['TJ-AA-001', ' ']]))).toThrow(/no reason/);
    const root = miniRepo({ cited: [], manual: { 'TJ-AA-001': 'line one\nline two' } });
    expect(() => loadManualRequirements(join(root, MANUAL_REQUIREMENTS_PATH))).toThrow(/one non-empty line/);
    const other = miniRepo({ cited: [], manual: { 'not-an-id': 'x' } });
    expect(() => loadManualRequirements(join(other, MANUAL_REQUIREMENTS_PATH))).toThrow(/not a requirement id/);
  });

  it('reads test citations, ranges included, from packages/*/test/**/*.test.ts only', () => {
    const root = miniRepo({ cited: ['TJ-AA-001..002'] });
    const map = buildRepositoryRequirementsMap(root);
    const tests = Object.fromEntries(map.requirements.map((r) => [r.id, r.tests]));
    expect(tests['TJ-AA-001']).toEqual(['packages/x/test/deep/a.test.ts']);
    expect(tests['TJ-AA-002']).toEqual(['packages/x/test/deep/a.test.ts']);
    expect(tests['TJ-AA-003']).toEqual([]);
    expect(map.uncovered).toEqual({ must: ['TJ-AA-004'], should: ['TJ-AA-003'] });
  });

  it('the script exits 1 listing the uncovered MUST ids, and 0 once they are covered or justified', async () => {
    const failing = await runCheck(miniRepo({ cited: ['TJ-AA-001'] }));
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/MUST NOT\s+2\s+0\s+0\s+0\s+2/);
    expect(failing.stdout).toContain('TJ-AA-002');
    expect(failing.stdout).toContain('TJ-AA-004');
    const passing = await runCheck(
      miniRepo({ cited: ['TJ-AA-001', 'TJ-AA-002'], manual: { 'TJ-AA-004': 'governs spec revisions' } }),
    );
    expect(passing.code).toBe(0);
    expect(passing.stdout).toMatch(/warning: 1 SHOULD-level requirement/);
    expect(passing.stdout).toContain('every MUST and MUST NOT requirement is covered');
    const broken = await runCheck(join(tmpdir(), 'tj-no-such-repo'));
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/check-coverage: .*spec\.md is missing/);
  }, 60_000);

  it('the repository’s manual list is short and every entry has a reason', () => {
    const manual = loadManualRequirements(join(repo, MANUAL_REQUIREMENTS_PATH));
    expect(manual.size).toBeLessThanOrEqual(12);
    for (const reason of manual.values()) expect(reason.length).toBeGreaterThan(20);
  });
});
