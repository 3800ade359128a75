import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Runs the built bin the way a user does (the global setup builds first), so exit codes and output are tested end to end.
const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');

function turnjournal(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repo });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function tempFile(name: string, text: string | Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), 'tj-cli-'));
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('turnjournal validate', () => {
  it('exits 0 on the example store and counts every record', () => {
    const run = turnjournal('validate', 'examples/store');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^5 file\(s\), 35 record\(s\), 1 problem\(s\)/);
    expect(run.stdout).toContain('torn_tail');
  });

  it('exits 1 and names line and field when a record breaks its schema', () => {
    const ok = '{"version":1,"event":"worker_started","turn_id":"t1","created_at":1}';
    const bad = '{"version":1,"event":"worker_started","turn_id":"t1","created_at":"yesterday"}';
    const run = turnjournal('validate', tempFile('s.jsonl', `${ok}\n${bad}\n`));
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('line 2: invalid_record: /created_at: expected number, got string "yesterday"');
    const json = JSON.parse(turnjournal('validate', '--format', 'json', tempFile('s.jsonl', `${ok}\n${bad}\n`)).stdout);
    expect(json.files[0].problems[0].errors).toEqual([
      expect.objectContaining({ pointer: '/created_at', expected: 'number' }),
    ]);
  });

  it('reports invalid UTF-8 and non-JSON lines as malformed, and the torn tail after them', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from('not json\n{"version":1,"eve')]);
    const run = turnjournal('validate', '--format', 'json', tempFile('d.jsonl', bytes));
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout) as { files: { problems: { code: string; line: number }[] }[] };
    expect(report.files[0]?.problems.map((p) => [p.line, p.code])).toEqual([
      [1, 'malformed_line'],
      [2, 'malformed_line'],
      [3, 'torn_tail'],
    ]);
  });

  it('exits 0 when the only problems are a torn tail and a blank line, and reports both', () => {
    const ok = '{"version":1,"event":"worker_started","turn_id":"t1","created_at":1}';
    const run = turnjournal('validate', tempFile('t.jsonl', `${ok}\n\n${ok}\n{"version":1,"ev`));
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('line 2: blank_line');
    expect(run.stdout).toContain('line 4: torn_tail');
  });

  it('treats a BOM that starts a later line as damage, and tolerates one at the start of the file', () => {
    const ok = '{"version":1,"event":"worker_started","turn_id":"t1","created_at":1}';
    const run = turnjournal('validate', tempFile('b.jsonl', `\uFEFF${ok}\n\uFEFF${ok}\n`));
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('line 2: malformed_line');
    // The BOM at the start is read past; it is only noted as something writers must not write (TJ-FAM-026).
    expect(run.stdout).toContain('line 1: writer_violation_bom');
    expect(run.stdout).not.toMatch(/line 1: (?!writer_violation_bom)/);
  });

  it('rejects a .json file that is not a state document', () => {
    const run = turnjournal('validate', tempFile('s.json', '{"session_id":"s","messages":[]}'));
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('line 1: invalid_record');
  });

  it('reports a dangling link in a directory as unreadable instead of crashing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tj-cli-'));
    mkdirSync(join(dir, 'store'));
    symlinkSync(join(dir, 'missing.jsonl'), join(dir, 'store', 'gone.jsonl'));
    const run = turnjournal('validate', join(dir, 'store'));
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('unreadable_file');
    expect(run.stderr).toBe('');
  });

  it('exits 2 on usage errors', () => {
    expect(turnjournal().status).toBe(2);
    expect(turnjournal('frobnicate').status).toBe(2);
    expect(turnjournal('validate').status).toBe(2);
    expect(turnjournal('validate', '/no/such/path').status).toBe(2);
    expect(turnjournal('validate', '--format', 'xml', 'examples').status).toBe(2);
    expect(turnjournal('validate', '--bogus', 'examples').status).toBe(2);
  });
});
