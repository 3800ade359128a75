// Coverage of TJ-FAM-011 (spec §4.3): ids that are not valid identifiers never become paths. The store sits next to
// decoy files at exactly the paths a reader that joined the hostile ids would open; the reference reader must never
// read them, so nothing from them reaches its results.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditStore, checkStore } from '../../src/index.js';

const line = (value: unknown) => `${JSON.stringify(value)}\n`;

function hostileStore(): { base: string; store: string } {
  const base = mkdtempSync(join(tmpdir(), 'tj-fam011-'));
  const store = join(base, 'store');
  const hostileSession = '../../outside/evil';
  const hostileRun = '../../../../../outside/run';
  mkdirSync(join(store, '_turn_journal'), { recursive: true });
  mkdirSync(join(store, 'sessions', '2026', '02', '03'), { recursive: true });
  mkdirSync(join(base, 'outside'), { recursive: true });
  writeFileSync(
    join(store, '_turn_journal', 's1.jsonl'),
    line({
      version: 1,
      event: 'submitted',
      turn_id: 't1',
      session_id: hostileSession,
      created_at: 1,
      role: 'user',
      content: 'hi',
    }),
  );
  writeFileSync(
    join(store, 'sessions', '2026', '02', '03', 'r1.jsonl'),
    line({ type: 'header', schema_version: 1, run_id: hostileRun, started_at: '2026-02-03T12:00:00Z' }),
  );
  // Decoys where `<store>/_turn_journal/<session>.jsonl` and `<store>/sessions/2026/02/03/<run>.jsonl` would land,
  // each holding records that would change the derived results if they were read.
  const decoySession = join(store, '_turn_journal', `${hostileSession}.jsonl`);
  const decoyRun = join(store, 'sessions', '2026', '02', '03', `${hostileRun}.jsonl`);
  expect(relative(store, decoySession).startsWith('..')).toBe(true);
  expect(decoySession).toBe(join(base, 'outside', 'evil.jsonl'));
  expect(decoyRun).toBe(join(base, 'outside', 'run.jsonl'));
  writeFileSync(
    decoySession,
    line({ version: 1, event: 'completed', turn_id: 't1', session_id: hostileSession, created_at: 2 }) +
      line({
        version: 1,
        event: 'submitted',
        turn_id: 'decoy',
        session_id: hostileSession,
        created_at: 1,
        role: 'user',
        content: 'x',
      }),
  );
  writeFileSync(
    decoyRun,
    line({ type: 'run.end', run_id: hostileRun, ts: '2026-02-03T12:00:09Z', outcome: 'completed' }),
  );
  return { base, store };
}

describe('identifiers are never paths (spec §4.3)', () => {
  it('reports hostile session and run ids and never reads the files those ids would name outside the store (TJ-FAM-011)', async () => {
    const { base, store } = hostileStore();
    const check = await checkStore([store]);
    const audit = await auditStore([store]);
    const codes = check.findings.map((f) => f.code);
    expect(codes).toContain('invalid_session_id');
    expect(codes).toContain('invalid_run_id');
    // Nothing from the decoys: the turn stays submitted, no decoy turn, the run did not end.
    const turns = check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state]));
    expect(turns).toEqual([['t1', 'submitted']]);
    expect(check.runs.map((r) => r.outcome)).not.toContain('completed');
    // Every file the results mention is inside the store.
    const mentioned = [
      ...check.files.map((f) => f.path),
      ...check.findings.flatMap((f) => (f.file === undefined ? [] : [f.file])),
      ...audit.check.findings.flatMap((f) => (f.file === undefined ? [] : [f.file])),
      ...check.sessions.flatMap((s) => [...s.files, ...s.turns.flatMap((t) => t.files)]),
      ...audit.heldFiles,
    ];
    expect(mentioned.length).toBeGreaterThan(0);
    for (const path of mentioned) expect(relative(store, path).startsWith('..'), path).toBe(false);
    expect(JSON.stringify(audit)).not.toContain(join(base, 'outside'));
  });
});
