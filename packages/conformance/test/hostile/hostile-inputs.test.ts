import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as gen from './generators.mjs';

// The hostile-input suite of issue 11, defect 8: stores an attacker or an unlucky operator leaves behind, run through
// the built CLI the way a user runs it. Small sizes here; TJ_HOSTILE_FULL=1 runs the sizes of the issue (5,000
// journals of 1,000 bad lines, 100,000 sessions), and `node packages/conformance/test/hostile/measure.mjs` prints
// peak RSS and wall time of each case. A hang is a failure, not a stuck run: every CLI run is killed after 60 s.

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');
const full = process.env.TJ_HOSTILE_FULL === '1';

function turnjournal(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    cwd: repo,
    timeout: 60_000,
    killSignal: 'SIGKILL',
    maxBuffer: 1 << 30,
  });
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

function root(): string {
  return mkdtempSync(join(tmpdir(), 'tj-hostile-'));
}

describe('special files are reported and never opened for a blocking read (TJ-FAM-024)', () => {
  it('a FIFO journal in a store: validate and check report special_file', () => {
    const store = gen.fifoJournal(root());
    for (const path of [store.store, store.special]) {
      const validate = turnjournal('validate', path);
      expect(validate.signal).toBeNull();
      expect(validate.status).toBe(1);
      expect(validate.stdout).toContain('line 0: special_file: a FIFO');
      const check = turnjournal('check', '--format', 'json', path);
      expect(check.signal).toBeNull();
      const report = JSON.parse(check.stdout) as { clean: boolean; findings: { code: string; file: string }[] };
      expect(report.clean).toBe(false);
      expect(report.findings).toContainEqual(expect.objectContaining({ code: 'special_file', file: store.special }));
    }
  });

  it('a FIFO state document: validate reports special_file', () => {
    const store = gen.fifoState(root());
    const run = turnjournal('validate', store.store);
    expect(run.signal).toBeNull();
    expect(run.stdout).toContain('line 0: special_file: a FIFO');
  });

  it('a journal linked to /dev/zero: validate reports a device, check does not follow the link', () => {
    const store = gen.zeroLink(root());
    const validate = turnjournal('validate', store.store);
    expect(validate.signal).toBeNull();
    expect(validate.stdout).toContain('line 0: special_file: a device');
    const check = turnjournal('check', store.store);
    expect(check.signal).toBeNull();
    expect(check.stdout).toContain('special_file: a symbolic link');
    const given = turnjournal('check', store.special);
    expect(given.stdout).toContain('special_file: a device');
    expect(given.stdout).not.toContain('clean');
  });

  it('a FIFO lock file does not hang audit', () => {
    const store = gen.fifoLock(root());
    const run = turnjournal('audit', store.store);
    expect(run.signal).toBeNull();
    expect(run.stdout).toContain('turn_journal_pending_turn');
    expect(run.stdout).toContain('a live writer holds its journal');
  });
});

describe('directory links (TJ-FAM-025)', () => {
  it('validate does not walk a link to / nor loop through a link to its parent', () => {
    const store = gen.rootLink(root());
    const run = turnjournal('validate', store.store);
    expect(run.signal).toBeNull();
    expect(run.stdout).toMatch(/^0 file\(s\)/);
  });
});

describe('store-wide finding cap (TJ-AUDIT-016)', () => {
  it('keeps at most 10,000 findings per code and counts the rest as omitted', () => {
    const [journals, lines] = full ? [5000, 1000] : [25, 500];
    const store = gen.manyBadLines(root(), journals, lines);
    const run = turnjournal('audit', '--format', 'json', store.store);
    expect(run.signal).toBeNull();
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout) as {
      findings: { code: string }[];
      summary: { omitted: Record<string, number> };
    };
    const kept = (code: string) => report.findings.filter((f) => f.code === code).length;
    expect(kept('malformed_line')).toBe(10_000);
    expect(report.summary.omitted.malformed_line).toBe(journals * lines - 10_000);
    // The audit derives its manual-review finding from the findings the check kept.
    expect(kept('turn_journal_malformed_event')).toBe(10_000);
  });

  it('reads many session files', () => {
    const sessions = full ? 100_000 : 2000;
    const store = gen.manySessions(root(), sessions);
    const run = turnjournal('check', store.store);
    expect(run.signal).toBeNull();
    expect(run.stdout).toContain(`clean: ${sessions} file(s), ${2 * sessions} record(s), ${sessions} session(s)`);
  });

  it('plans, and recovers, the abandoned turn of each of many sessions (TJ-RECOV-002, TJ-RECOV-003)', () => {
    // Recovery reports each planned turn's outcome and finds each one's journal: both are walked alongside the plan,
    // in session order, so a session out of step would show as skipped or "not reached".
    const sessions = 30;
    const store = gen.manySessions(root(), sessions, true);
    const plan = turnjournal('recover', store.store);
    expect(plan.status).toBe(0);
    expect(
      plan.stdout
        .split('\n')
        .filter((line) =>
          line.endsWith(' t1 (submitted): ensure_user_message → ensure_interruption_marker → append_interrupted'),
        ),
    ).toHaveLength(sessions);
    const applied = turnjournal('recover', '--apply', '--journal-only', '--format', 'json', store.store);
    expect(applied.status).toBe(0);
    const output = JSON.parse(applied.stdout) as { turns: { session_id: string; outcome: string }[] };
    expect(output.turns.map((t) => `${t.session_id} ${t.outcome}`)).toEqual(
      Array.from({ length: sessions }, (_, i) => `s${i} recovered`).sort(),
    );
    const after = turnjournal('recover', store.store);
    expect(after.stdout).toBe('No abandoned turn: nothing to recover.\n');
  });
});

describe('unsafe sequence numbers (TJ-EVENT-018)', () => {
  it('a seq of 2^53 is an invalid record, not a message silently left out', () => {
    const store = gen.unsafeSeq(root());
    const run = turnjournal('inspect', store.store);
    expect(run.signal).toBeNull();
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('invalid_record (line 2): /seq');
  });
});
