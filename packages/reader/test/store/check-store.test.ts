import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Finding } from '@turnjournal/schema';
import { describe, expect, it } from 'vitest';
import { checkStore } from '../../src/index.js';

// A file or directory the check could not read to the end is never part of a clean verdict (TJ-AUDIT-015): it is an
// `incomplete_read` error, never the `unrecognised_file` info that let a sweep prune on a partial view (issue 11,
// defect 0).

const record = (o: Record<string, unknown>) => JSON.stringify({ version: 1, session_id: 's', created_at: 1, ...o });
const submitted = (turnId: string) => record({ event: 'submitted', turn_id: turnId, role: 'user', content: 'hi' });

function store(): string {
  const root = mkdtempSync(join(tmpdir(), 'tj-check-store-'));
  mkdirSync(join(root, '_turn_journal'));
  return root;
}

const codes = (findings: readonly Finding[]) => findings.map((f) => `${f.severity} ${f.code}`);

describe('checkStore: files not read to the end (TJ-AUDIT-015)', () => {
  it('reads a journal with duplicate records nested 10,000 levels deep to its end', async () => {
    const root = store();
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const completed = (order: 'a' | 'b') =>
      order === 'a'
        ? `{"version":1,"event":"completed","turn_id":"t1","session_id":"s","created_at":2,"terminal":true,"x":${deep}}`
        : `{"event":"completed","version":1,"turn_id":"t1","session_id":"s","created_at":2,"terminal":true,"x":${deep}}`;
    const lines = [submitted('t1'), completed('a'), completed('b'), submitted('t2'), 'garbage'];
    writeFileSync(join(root, '_turn_journal/s.jsonl'), `${lines.join('\n')}\n`);
    const check = await checkStore([root]);
    expect(codes(check.findings).sort()).toEqual(['error malformed_line', 'info duplicate_event']);
    expect(check.findings.find((f) => f.code === 'malformed_line')?.line).toBe(5);
    expect(check.sessions[0]?.turns.map((t) => `${t.turnId} ${t.state}`)).toEqual(['t1 completed', 't2 submitted']);
  });

  it('reports directories nested deeper than the scan limit as incomplete_read, an error', async () => {
    const root = store();
    let deep = root;
    for (let i = 0; i < 40; i += 1) deep = join(deep, 'd');
    mkdirSync(deep, { recursive: true });
    const check = await checkStore([root]);
    const finding = check.findings.find((f) => f.code === 'incomplete_read');
    expect(finding).toMatchObject({ severity: 'error', repairable: false });
    expect(finding?.message).toMatch(/deeper than 32 levels/);
  });

  it('reports a path that does not exist as incomplete_read', async () => {
    const missing = join(store(), 'nothing-here');
    const check = await checkStore([missing]);
    expect(check.findings).toEqual([
      expect.objectContaining({ code: 'incomplete_read', severity: 'error', file: missing }),
    ]);
  });

  it('reports a file and a directory it may not read (EACCES) as incomplete_read', () => {
    const root = store();
    // Readable by all but the two entries below: the check runs as an unprivileged user.
    chmodSync(root, 0o755);
    chmodSync(join(root, '_turn_journal'), 0o755);
    const file = join(root, '_turn_journal/s.jsonl');
    writeFileSync(file, `${submitted('t1')}\n`);
    chmodSync(file, 0o000);
    const dir = join(root, 'sessions');
    mkdirSync(dir);
    chmodSync(dir, 0o000);
    // Root reads any file: as root, the child runs without capabilities (util-linux `setpriv`), so file modes apply to
    // it, while it can still reach the checkout (a clone in a 0700 temporary directory is closed to `nobody`).
    const child = [process.execPath, join(import.meta.dirname, 'check-child.mjs'), root];
    const [command, ...args] =
      process.getuid?.() === 0 ? ['setpriv', '--inh-caps=-all', '--bounding-set=-all', ...child] : child;
    const out = execFileSync(command as string, args, { encoding: 'utf8' });
    const findings = JSON.parse(out) as Finding[];
    expect(findings.map((f) => `${f.severity} ${f.code} ${f.file}`).sort()).toEqual(
      [`error incomplete_read ${dir}`, `error incomplete_read ${file}`].sort(),
    );
    expect(findings.find((f) => f.file === file)?.message).toMatch(/EACCES/);
  });
});

describe('checkStore: sessions share one table of representatives', () => {
  it('keeps every session’s turns apart: same turn ids, duplicates and shards in many sessions (TJ-DERIVE-013)', async () => {
    // The folds of one check share a representative table and number their turns across sessions; a mix-up would give
    // one session's summaries, or its duplicate verdicts, to another.
    const root = store();
    const sessions = 300;
    const line = (sid: string, o: Record<string, unknown>) =>
      JSON.stringify({ version: 1, session_id: sid, created_at: 1, ...o });
    for (let i = 0; i < sessions; i += 1) {
      const sid = `s${String(i).padStart(3, '0')}`;
      const ask = line(sid, { event: 'submitted', turn_id: 't1', role: 'user', content: `question of ${sid}` });
      const done = line(sid, { event: 'completed', turn_id: 't1', content: `answer of ${sid}`, created_at: i });
      // Every third session repeats its submitted (an exact copy), every fifth writes a second, different completed in
      // a shard, so duplicates meet records of other sessions in the table.
      const main = [ask, ...(i % 3 === 0 ? [ask] : []), done];
      writeFileSync(join(root, `_turn_journal/${sid}.jsonl`), `${main.join('\n')}\n`);
      if (i % 5 === 0) {
        const other = line(sid, {
          event: 'completed',
          turn_id: 't1',
          content: `other answer of ${sid}`,
          created_at: i,
        });
        writeFileSync(join(root, `_turn_journal/${sid}~b.jsonl`), `${other}\n`);
      }
    }
    const check = await checkStore([root]);
    expect(check.sessions).toHaveLength(sessions);
    for (const [i, session] of check.sessions.entries()) {
      const sid = `s${String(i).padStart(3, '0')}`;
      expect(session.sessionId).toBe(sid);
      const [turn] = session.turns;
      expect(session.turns).toHaveLength(1);
      expect(turn?.state).toBe('completed');
      expect(turn?.events.submitted?.summary.contentExcerpt).toBe(`question of ${sid}`);
      // The smaller bytes represent a conflicting duplicate (TJ-DERIVE-013): "answer…" sorts before "other answer…".
      expect(turn?.events.completed?.summary.contentExcerpt).toBe(`answer of ${sid}`);
      expect(turn?.events.completed?.summary.createdAt).toBe(i);
      expect(session.findings.map((f) => f.code).sort()).toEqual([
        ...(i % 5 === 0 ? ['conflicting_duplicate'] : []),
        ...(i % 3 === 0 ? ['duplicate_event'] : []),
      ]);
    }
  });
});
