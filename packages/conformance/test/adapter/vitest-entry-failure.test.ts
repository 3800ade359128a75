// `@turnjournal/conformance/vitest` must turn a failed check into a failed `it`: run vitest for real, in a child
// process, on a throw-away project whose suites use the built entry point, one with the reference adapter and one
// with a broken adapter (TJ-CONF-002), and read vitest's own JSON report.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokenAdapter, referenceAdapter, repo } from './support.js';

interface JsonReport {
  readonly testResults: readonly {
    readonly name: string;
    readonly assertionResults: readonly { title: string; status: string; failureMessages: string[] }[];
  }[];
}

function suite(adapter: string): string {
  const entry = join(repo, 'packages/conformance/dist/vitest.js');
  // One store fixture file is enough: the U+2028 defect breaks a framing case, the reference passes them all.
  return `import { defineConformanceSuite } from ${JSON.stringify(entry)};
defineConformanceSuite({ adapter: ${JSON.stringify(adapter)}, tier: 'reader', runs: 1, only: ['reader/store/framing.json'] });
`;
}

function runVitest(project: string, output: string): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        join(repo, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--root',
        project,
        '--reporter=json',
        `--outputFile=${output}`,
      ],
      { cwd: project, stdio: 'ignore' },
    );
    child.on('close', resolve);
  });
}

describe('defineConformanceSuite in a real vitest run (TJ-CONF-002)', () => {
  it('a broken adapter fails the generated it of the check it breaks; the reference adapter passes every one', async () => {
    const project = mkdtempSync(join(tmpdir(), 'tj-vitest-entry-'));
    writeFileSync(join(project, 'vitest.config.mjs'), 'export default { test: { testTimeout: 120000 } };\n');
    writeFileSync(join(project, 'reference.test.mjs'), suite(referenceAdapter));
    writeFileSync(join(project, 'broken.test.mjs'), suite(brokenAdapter('split-u2028')));
    const output = join(project, 'report.json');
    const status = await runVitest(project, output);
    const report = JSON.parse(readFileSync(output, 'utf8')) as JsonReport;
    const results = (file: string) => report.testResults.find((r) => r.name.endsWith(file))?.assertionResults ?? [];

    expect(status, 'vitest exits 1 when a generated it fails').toBe(1);
    const reference = results('reference.test.mjs');
    expect(reference.length).toBeGreaterThan(5);
    expect(reference.filter((r) => r.status !== 'passed')).toEqual([]);

    const broken = results('broken.test.mjs');
    const failed = broken.filter((r) => r.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(broken.filter((r) => r.status === 'passed').length, 'the other checks still pass').toBeGreaterThan(0);
    for (const f of failed) {
      // Named by its check id and requirement ids, and failing with the check's details.
      expect(f.title).toMatch(/^reader\/store\/framing\.json\S* \[TJ-[A-Z]+-\d{3}(, TJ-[A-Z]+-\d{3})*\]$/);
      expect(f.failureMessages.join('\n')).not.toBe('');
    }
    expect(failed.some((f) => f.title.includes('TJ-FRAME-002'))).toBe(true);
  }, 240_000);
});
