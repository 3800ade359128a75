import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');
const reportSchema = JSON.parse(readFileSync(join(repo, 'spec/v1/report.schema.json'), 'utf8'));
const validateReport = new Ajv2020({ strict: true }).compile(reportSchema);

function turnjournal(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repo });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function store(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), 'tj-store-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const sub = (turn: string, session = 's1') =>
  `${JSON.stringify({ version: 1, event: 'submitted', turn_id: turn, session_id: session, created_at: 1, role: 'user', content: `c ${turn}` })}\n`;
const step = (event: string, turn: string, extra = {}) =>
  `${JSON.stringify({ version: 1, event, turn_id: turn, created_at: 2, ...extra })}\n`;

describe('turnjournal check', () => {
  it('exits 0 on the example store, whose only finding is a torn tail: warnings do not fail a check, but the store is not clean (TJ-CONF-016, TJ-AUDIT-014)', () => {
    const run = turnjournal('check', 'examples/store');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^check: passed with warnings: /);
    expect(run.stdout).toContain('torn_tail');
    const report = JSON.parse(turnjournal('check', '--format', 'json', 'examples/store').stdout);
    expect(report.clean).toBe(false);
    expect(report.summary.findings).toEqual({ error: 0, warn: 1, info: 0 });
  });

  it('writes a JSON report that follows spec/v1/report.schema.json, with every turn and every finding located (TJ-AUDIT-003, TJ-AUDIT-011)', () => {
    const root = store({
      '_turn_journal/s1.jsonl': `${sub('t1')}${step('completed', 't1')}garbage\n`,
      '_turn_journal/s1~77.jsonl': `${sub('t2')}${step('worker_started', 't2')}`,
    });
    const run = turnjournal('check', '--format', 'json', root);
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(validateReport(report)).toBe(true);
    expect(report.sessions).toEqual([
      expect.objectContaining({
        session_id: 's1',
        turns: [
          expect.objectContaining({ turn_id: 't1', state: 'completed' }),
          expect.objectContaining({ turn_id: 't2', state: 'worker_started' }),
        ],
      }),
    ]);
    expect(report.findings).toContainEqual(
      expect.objectContaining({
        code: 'malformed_line',
        severity: 'error',
        file: join(root, '_turn_journal/s1.jsonl'),
        line: 3,
      }),
    );
  });

  it('stops at the first damage in prefix mode and reports it in strict mode without crashing', () => {
    const root = store({ '_turn_journal/s1.jsonl': `${sub('t1')}garbage\n${step('completed', 't1')}` });
    const prefix = JSON.parse(turnjournal('check', '--mode', 'prefix', '--format', 'json', root).stdout);
    expect(prefix.sessions[0].turns[0].state).toBe('submitted');
    const strict = turnjournal('check', '--mode', 'strict', root);
    expect(strict.status).toBe(1);
    expect(strict.stdout).toContain('malformed_line (line 2)');
  });

  it('reports hostile session ids in file names and never crashes', () => {
    const root = store({
      '_turn_journal/bad id!.jsonl': sub('t1', 'bad id!'),
      '_turn_journal/ok.jsonl': sub('t2', 'ok'),
    });
    const run = turnjournal('check', '--format', 'json', root);
    const report = JSON.parse(run.stdout);
    expect(report.findings).toContainEqual(expect.objectContaining({ code: 'invalid_session_id' }));
    expect(run.status).toBe(1);
  });

  it('renders JUnit XML with one failing case per file with errors', () => {
    const root = store({
      '_turn_journal/s1.jsonl': `${sub('t1')}garbage\n`,
      '_turn_journal/s2.jsonl': sub('t2', 's2'),
    });
    const run = turnjournal('check', '--format', 'junit', root);
    expect(run.stdout).toMatch(/<testsuites name="turnjournal check" tests="2" failures="1">/);
  });

  it('inspect prints a timeline of turns with their state, and never more than 64 bytes of content (TJ-AUDIT-012)', () => {
    const long = JSON.stringify({
      version: 1,
      event: 'submitted',
      turn_id: 't9',
      session_id: 's1',
      created_at: 1,
      role: 'user',
      content: 'x'.repeat(500),
    });
    const run = turnjournal('inspect', store({ '_turn_journal/s1.jsonl': `${long}\n` }));
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`t9  submitted  1970-01-01T00:00:01.000Z "${'x'.repeat(64)}"…`);
    expect(run.stdout).not.toContain('x'.repeat(65));
  });

  it('exits 2 on a bad mode or format', () => {
    expect(turnjournal('check', '--mode', 'lenient', 'examples').status).toBe(2);
    expect(turnjournal('check', '--format', 'yaml', 'examples').status).toBe(2);
  });
});

describe('turnjournal check of an event log that two writers appended to (TJ-EVENT-027, issue 34)', () => {
  it('exits 1: the repeated and falling seqs two owners leave are errors, not warnings', () => {
    // Two owners of one log, each continuing from the seq it last saw: their appends interleave.
    const event = (seq: number, who: string) =>
      `${JSON.stringify({ seq, ts: '2026-06-19T03:14:07Z', type: 'message_append', payload: { message: { role: 'user', content: `${who}${seq}` } } })}\n`;
    const lines = [event(0, 'a'), event(1, 'a'), event(2, 'a'), event(2, 'b'), event(3, 'a'), event(3, 'b')];
    // The first owner skipped a seq it had reserved; the second goes on below it.
    lines.push(event(5, 'a'), event(4, 'b'));
    const root = store({ 's1/events.jsonl': lines.join('') });
    const run = turnjournal('check', '--format', 'json', root);
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout);
    const codes = report.findings.map((f: { code: string; severity: string }) => `${f.code}:${f.severity}`);
    expect(codes).toEqual(expect.arrayContaining(['seq_duplicate:error', 'seq_regression:error']));
    expect(report.summary.findings.error).toBe(3);
  });
});
