import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// `turnjournal validate` lists at most 1,000 problems per code and file and 10,000 per code over a run, as `check`
// caps its findings (spec TJ-AUDIT-013, TJ-AUDIT-016), and counts the rest in `omitted`: a 2 MB file of 2,000,000
// blank lines printed 2,000,000 problems and peaked at 1.0 GB (issue 34, finding 8).

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');
const peakRss = join(import.meta.dirname, 'report-peak-rss.mjs');

interface ValidateJson {
  files: { path: string; problems: { code: string }[]; omitted: Record<string, number> }[];
  omitted: Record<string, number>;
}

function validate(args: readonly string[], stdout: 'pipe' | 'ignore' = 'pipe', nodeFlags: readonly string[] = []) {
  const result = spawnSync(process.execPath, [...nodeFlags, '--import', peakRss, bin, 'validate', ...args], {
    encoding: 'utf8',
    cwd: repo,
    // A hang guard far above the few seconds a capped run takes on a loaded machine.
    timeout: 120_000,
    killSignal: 'SIGKILL',
    stdio: ['ignore', stdout, 'pipe'],
    maxBuffer: 64 << 20,
  });
  const kib = Number(/peak_rss_kib=(\d+)/.exec(result.stderr)?.[1]);
  return { status: result.status, signal: result.signal, stdout: result.stdout ?? '', peakMiB: kib / 1024 };
}

function blankLines(dir: string, name: string, lines: number): string {
  const path = join(dir, name);
  writeFileSync(path, '\n'.repeat(lines));
  return path;
}

describe('validate caps the problems it lists (TJ-AUDIT-013, TJ-AUDIT-016)', () => {
  const LINES = 2_000_000;
  const file = blankLines(mkdtempSync(join(tmpdir(), 'tj-validate-cap-')), 'blank.jsonl', LINES);

  it('lists 1,000 of two million blank lines and counts the rest in omitted (JSON)', () => {
    const run = validate(['--format', 'json', file]);
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0); // blank lines are information only
    const output = JSON.parse(run.stdout) as ValidateJson;
    expect(output.files).toHaveLength(1);
    const [result] = output.files;
    expect(result?.problems.filter((p) => p.code === 'blank_line')).toHaveLength(1000);
    expect(result?.problems).toHaveLength(1000);
    expect(result?.omitted).toEqual({ blank_line: LINES - 1000 });
    expect(output.omitted).toEqual({ blank_line: LINES - 1000 });
  });

  it('says how many it left out (text)', () => {
    const run = validate([file]);
    expect(run.signal).toBeNull();
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(
      `1 file(s), 0 record(s), ${LINES} problem(s) (${LINES - 1000} not listed: 1000 at most per code and file)`,
    );
    expect(lines.filter((line) => line.includes(': blank_line: '))).toHaveLength(1000);
    expect(lines).toContain(`  … ${LINES - 1000} more blank_line omitted`);
  });

  it('keeps its peak memory bounded on two million blank lines', () => {
    // With a 64 MiB old generation the run must still finish: what it keeps alive follows the cap (before the cap, two
    // million problems were kept, and the run died out of memory). Without the limit V8 collects lazily and the same
    // run peaks near 250 MiB of mostly garbage, which says little about what is kept.
    const run = validate([file], 'ignore', ['--max-old-space-size=64']);
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
    expect(run.peakMiB).toBeGreaterThan(0);
    // Before the cap: 1.0 GB without the limit. A generous bound: Node alone is about 50 MiB.
    expect(run.peakMiB).toBeLessThan(300);
    console.info(`validate of ${LINES} blank lines, 64 MiB old space: peak RSS ${run.peakMiB.toFixed(0)} MiB`);
  });

  it('lists at most 10,000 problems of a code over a run of many files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tj-validate-cap-'));
    for (let i = 0; i < 12; i++) blankLines(dir, `f${String(i).padStart(2, '0')}.jsonl`, 1000);
    const run = validate(['--format', 'json', dir]);
    const output = JSON.parse(run.stdout) as ValidateJson;
    const listed = output.files.reduce((n, f) => n + f.problems.length, 0);
    expect(listed).toBe(10_000);
    expect(output.omitted).toEqual({ blank_line: 2000 });
    expect(output.files.slice(0, 10).every((f) => f.problems.length === 1000)).toBe(true);
    expect(output.files.slice(10).map((f) => f.omitted)).toEqual([{ blank_line: 1000 }, { blank_line: 1000 }]);
  });

  it('fails the run on an invalid line even when the cap leaves it unlisted', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tj-validate-cap-'));
    // 10,000 malformed lines fill the run's list of that code; the malformed line of the last file is only counted.
    for (let i = 0; i < 10; i++) writeFileSync(join(dir, `a${i}.jsonl`), '{\n'.repeat(1000));
    writeFileSync(join(dir, 'z.jsonl'), '{\n');
    const run = validate(['--format', 'json', join(dir)]);
    const output = JSON.parse(run.stdout) as ValidateJson;
    expect(output.files.at(-1)?.problems).toEqual([]);
    expect(output.files.at(-1)?.omitted).toEqual({ malformed_line: 1 });
    expect(run.status).toBe(1);
  });
});
