import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatConformanceReport, runConformance } from '../../../src/index.js';
import { bin, fakeAdapter, fakeLoop, referenceAdapter, repo, START, turnjournal } from '../support.js';

/** A reader that answers every read with nothing at all. */
const emptyReader = fakeAdapter(
  fakeLoop(`(r) => JSON.stringify({ id: r.id, ...(r.op === 'start' ? { ok: true, result: ${START} }
    : r.op === 'read' ? { ok: true, result: { turns: {}, findings: [], runs: {}, event_logs: {} } }
    : r.op === 'stop' ? { ok: true, result: {} }
    : { ok: false, error: { code: 'unsupported', message: 'no' } }) })`),
);

describe('no false greens (issue 12 §3)', () => {
  it('a missing fixture directory fails the run instead of passing zero cases (TJ-CONF-002)', async () => {
    const report = await runConformance({
      adapter: emptyReader,
      runs: 0,
      fixturesDir: join(tmpdir(), 'tj-no-such-dir', 'v1', 'store'),
    });
    const fixtures = report.checks.find((c) => c.id === 'reader/fixtures');
    expect(fixtures?.status).toBe('failed');
    expect(fixtures?.details.join(' ')).toContain('does not exist');
    expect(report.ok).toBe(false);
    expect(report.conformant).toBe(false);
  }, 60_000);

  it('an empty fixture directory fails the run too', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-empty-fixtures-'));
    mkdirSync(join(root, 'v1', 'store'), { recursive: true });
    const report = await runConformance({ adapter: emptyReader, runs: 0, fixturesDir: join(root, 'v1', 'store') });
    expect(report.checks.find((c) => c.id === 'reader/fixtures')?.details.join(' ')).toContain(
      'holds no store fixture case',
    );
    expect(report.ok).toBe(false);
  }, 60_000);

  it('an --only run is a partial run: conformant false, and the text never says CONFORMANT', async () => {
    const report = await runConformance({
      adapter: referenceAdapter,
      runs: 0,
      only: ['reader/store/basics.json#0'],
    });
    expect(report.ok).toBe(true);
    expect(report.partial).toBe(true);
    expect(report.conformant).toBe(false);
    const text = formatConformanceReport(report, 'text');
    expect(text).toContain('partial run');
    expect(text).not.toMatch(/^CONFORMANT/m);
  }, 60_000);

  it('a --tier run that leaves out a claimed level is partial; one that covers every claimed level is not', async () => {
    const reader = await runConformance({ adapter: referenceAdapter, tier: 'reader', runs: 0 });
    expect(reader.partial).toBe(true);
    expect(reader.conformant).toBe(false);
    const onlyReader = await runConformance({ adapter: emptyReader, tier: 'reader', runs: 0 });
    expect(onlyReader.partial).toBe(false);
  }, 120_000);

  it('without strace the durability claim is not proven: exit 4, and the text says how to get strace', async () => {
    // A PATH with node and sh only: the kit cannot find strace (nor mkfifo and prlimit, so writer/fifo and
    // writer/short-write are unproven too).
    const path = mkdtempSync(join(tmpdir(), 'tj-no-strace-'));
    symlinkSync(process.execPath, join(path, 'node'));
    symlinkSync('/bin/sh', join(path, 'sh'));
    const run = await new Promise<{ status: number | null; stdout: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [bin, 'conformance', '--adapter', referenceAdapter, '--tier', 'writer', '--runs', '1', '--format', 'json'],
        { cwd: repo, env: { ...process.env, PATH: path } },
      );
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        stdout += c;
      });
      child.on('close', (status) => resolve({ status, stdout }));
    });
    const report = JSON.parse(run.stdout) as import('../../../src/index.js').ConformanceReport;
    expect(report.not_proven).toEqual([
      'writer/fifo',
      'writer/fsync-before-ack',
      'writer/durable-open',
      'writer/none-close',
      'writer/fault-fdatasync-eio',
      'writer/fault-fdatasync-once',
      'writer/fault-write-eio',
      'writer/fault-write-enospc',
      'writer/short-write',
      'writer/state-replace',
      'writer/durable-directories',
      'writer/recover-durable',
      'writer/sweep-rewrite',
      'writer/sweep-recheck',
      'writer/live-durable',
    ]);
    expect(report.conformant).toBe(false);
    expect(run.status).toBe(4);
    const text = formatConformanceReport(report, 'text');
    expect(text).toMatch(/NOT PROVEN: writer\/fifo, writer\/fsync-before-ack, /);
    expect(text).toContain('apt-get install strace');
  }, 120_000);

  it('a full run of the reference adapter is CONFORMANT and exits 0 (when strace can trace)', async () => {
    const run = await turnjournal('conformance', '--adapter', referenceAdapter, '--runs', '1', '--format', 'json');
    const report = JSON.parse(run.stdout) as import('../../../src/index.js').ConformanceReport;
    expect(report.partial).toBe(false);
    // The failing checks first, so that a failure says which check and why.
    expect(report.checks.filter((c) => c.status === 'failed').map((c) => [c.id, c.details])).toEqual([]);
    if (report.not_proven.length === 0) {
      expect(report.conformant).toBe(true);
      expect(run.status).toBe(0);
    } else expect(run.status).toBe(4);
  }, 180_000);
});
