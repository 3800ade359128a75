import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { type ConformanceReport, straceAvailable } from '../support/internals.js';
import { brokenAdapter, referenceAdapter, repo, turnjournal } from './support.js';

const validateReport = new Ajv2020({ strict: true }).compile(
  JSON.parse(readFileSync(join(repo, 'spec/v1/conformance-report.schema.json'), 'utf8')),
);

/** A minimal XML well-formedness check: one root, balanced and properly nested tags, quoted attributes, no stray `<`/`&`. */
function xmlProblems(text: string): string[] {
  const body = text.replace(/^<\?xml[^?]*\?>\s*/, '');
  const problems: string[] = [];
  const stack: string[] = [];
  const token = /<(\/?)([A-Za-z][\w.-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|&(?:amp|lt|gt|quot|apos);|[<&]/g;
  let roots = 0;
  for (const match of body.matchAll(token)) {
    const [whole, closing, name, , selfClosing] = match;
    if (whole === '<' || whole === '&') {
      problems.push(`stray ${whole} at ${match.index}`);
      continue;
    }
    if (name === undefined) continue;
    if (closing === '/') {
      if (stack.pop() !== name) problems.push(`mismatched </${name}>`);
    } else if (selfClosing !== '/') {
      if (stack.length === 0) roots++;
      stack.push(name);
    } else if (stack.length === 0) roots++;
  }
  if (stack.length > 0) problems.push(`unclosed ${stack.join(', ')}`);
  if (roots !== 1) problems.push(`${roots} root elements`);
  return problems;
}

describe('turnjournal conformance against the reference adapter', () => {
  it('passes every check of the reader and writer tiers (TJ-CONF-002, TJ-CONF-009, TJ-CONF-016, TJ-CONF-018, TJ-CONF-020, TJ-CONF-023, TJ-CONF-025..027)', async () => {
    const reportFile = join(mkdtempSync(join(tmpdir(), 'tj-conf-test-')), 'report.json');
    const run = await turnjournal(
      'conformance',
      '--adapter',
      referenceAdapter,
      '--runs',
      '3',
      '--format',
      'junit',
      '--report',
      reportFile,
    );
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as ConformanceReport;
    const failed = report.checks.filter((c) => c.status !== 'passed' && c.status !== 'skipped');
    expect(failed).toEqual([]);
    expect(run.status).toBe(straceAvailable() ? 0 : 4);
    expect(report.ok).toBe(true);
    // Every store fixture case runs: the reference claims every family and feature, so nothing is skipped but strace.
    const skipped = report.checks.filter((c) => c.status === 'skipped').map((c) => c.id);
    // Without strace, only the strace-based checks are skipped, and each leaves the claim not proven (exit 4).
    expect(skipped).toEqual(straceAvailable() ? [] : report.not_proven);
    expect(report.checks.filter((c) => c.id.startsWith('reader/store/')).length).toBeGreaterThan(250);
    for (const id of ['writer/ack-oracle', 'writer/restart', 'writer/lock', 'writer/torn-tail', 'reader/generated#2'])
      expect(report.checks.map((c) => c.id)).toContain(id);
    // The JSON report follows its published schema; the JUnit output is well-formed XML with one testcase per check.
    expect(validateReport.errors ?? [], JSON.stringify(validateReport(report) ? [] : validateReport.errors)).toEqual(
      [],
    );
    expect(validateReport(report)).toBe(true);
    expect(xmlProblems(run.stdout)).toEqual([]);
    expect(run.stdout.match(/<testcase /g)?.length).toBe(report.checks.length);
    // The ack oracle of the kill rounds, and of the generated histories (writer/histories).
    expect(report.requirements['TJ-CONF-009']?.passed).toBe(2);
  }, 240_000);

  it('exits 2 on a usage error', async () => {
    const missing = await turnjournal('conformance');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--adapter "<command>" is required');
    const tier = await turnjournal('conformance', '--adapter', 'true', '--tier', 'both');
    expect(tier.status).toBe(2);
    const misplaced = await turnjournal('check', '--adapter', 'x', 'examples/store');
    expect(misplaced.status).toBe(2);
  });
});

describe('expected-failures baseline (TJ-CONF-017)', () => {
  const adapter = brokenAdapter('split-u2028');
  const baselineFile = (failures: { check: string; reason: string }[]) => {
    const path = join(mkdtempSync(join(tmpdir(), 'tj-conf-baseline-')), 'expected-failures.json');
    writeFileSync(path, JSON.stringify({ failures }));
    return path;
  };

  // Narrowed to the framing fixtures, where the defect shows, to stay fast.
  const args = [
    'conformance',
    '--adapter',
    adapter,
    '--tier',
    'reader',
    '--runs',
    '0',
    '--only',
    'reader/store/framing.json',
  ];

  it('a listed failing check does not fail the run; a listed passing check fails it as stale (TJ-CONF-017, TJ-CONF-030)', async () => {
    const plain = await turnjournal(...args, '--format', 'json');
    expect(plain.status).toBe(1);
    const failing = (JSON.parse(plain.stdout) as ConformanceReport).checks.filter((c) => c.status === 'failed');
    expect(failing.length).toBeGreaterThan(0);

    const listed = failing.map((c) => ({ check: c.id, reason: 'splits lines on U+2028' }));
    const [baselined, stale] = await Promise.all([
      turnjournal(...args, '--format', 'json', '--expected-failures', baselineFile(listed)),
      turnjournal(
        ...args,
        ...['--format', 'json', '--expected-failures'],
        baselineFile([...listed, { check: 'adapter/start', reason: 'once failed' }]),
      ),
    ]);
    const report = JSON.parse(baselined.stdout) as ConformanceReport;
    expect(baselined.status).toBe(0);
    expect(report.summary.expected_failure).toBe(failing.length);
    expect(report.summary.failed).toBe(0);

    const staleReport = JSON.parse(stale.stdout) as ConformanceReport;
    expect(stale.status).toBe(1);
    expect(staleReport.checks.find((c) => c.id === 'adapter/start')?.status).toBe('stale_expected_failure');
  }, 120_000);

  it('rejects a baseline file that is not {"failures":[...]} as a usage error', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tj-conf-baseline-')), 'bad.json');
    writeFileSync(path, '{"entries":[]}');
    const run = await turnjournal('conformance', '--adapter', 'true', '--expected-failures', path);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('expected {"failures"');
  });
});
