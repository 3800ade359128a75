import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { freshDir } from '../fresh-dir.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { claimsFeature, plantLock } from './support.js';

const JOURNAL_DIR = '_turn_journal';
const RUN_FILE = join('sessions', '2026', '01', '01', 'r1.jsonl');

const turn = (event: string, turnId: string, createdAt: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ version: 1, event, turn_id: turnId, created_at: createdAt, ...extra });
const submitted = (turnId: string, session: string, extra: Record<string, unknown> = {}) =>
  turn('submitted', turnId, 1, { session_id: session, role: 'user', content: `hello ${turnId}`, ...extra });

/**
 * The store every recovery check starts from. Session `s1`: `t1` abandoned after `worker_started` (its `submitted` has
 * a `stream_id`), `t2` completed, `t3` abandoned after `assistant_started`, and a torn tail a crash left. Session `s2`:
 * `t4` pending in a journal whose lock a live writer holds (the harness's own pid on this host). A run file without
 * `run.end`.
 */
export function writeRecoveryStore(root: string): void {
  mkdirSync(join(root, JOURNAL_DIR), { recursive: true });
  writeFileSync(
    join(root, JOURNAL_DIR, 's1.jsonl'),
    [
      submitted('t1', 's1', { stream_id: 'st1' }),
      turn('worker_started', 't1', 2),
      submitted('t2', 's1'),
      turn('worker_started', 't2', 2),
      turn('completed', 't2', 3),
      submitted('t3', 's1'),
      turn('assistant_started', 't3', 4),
      '{"version":1,"event":"comp',
    ].join('\n'),
  );
  writeFileSync(join(root, JOURNAL_DIR, 's2.jsonl'), `${submitted('t4', 's2')}\n`);
  plantLock(join(root, JOURNAL_DIR, 's2.jsonl'), {
    pid: process.pid,
    host: hostname(),
    token: 'tj-conformance-live-holder',
  });
  mkdirSync(join(root, 'sessions', '2026', '01', '01'), { recursive: true });
  writeFileSync(
    join(root, RUN_FILE),
    `${JSON.stringify({ type: 'header', schema_version: 1, run_id: 'r1', started_at: '2026-01-01T00:00:00Z' })}\n${JSON.stringify({ type: 'run.start', run_id: 'r1', ts: '2026-01-01T00:00:01Z', input: { type: 'chat' } })}\n`,
  );
}

/** Every file of the store with its bytes, by path relative to the root. */
function snapshot(root: string, paths: readonly string[]): Map<string, string> {
  return new Map(paths.map((p) => [p, existsSync(join(root, p)) ? readFileSync(join(root, p), 'latin1') : '']));
}

/**
 * `writer/recover` (feature `recovery`, adapter.md §5.5): `recover` on the store above must close exactly the
 * abandoned turns `t1` and `t3` with one `interrupted` each — reason `server_startup_recovery`, the turn's ids, and
 * `t1`'s `stream_id` (TJ-RECOV-006) — appended after the torn tail was cut off (TJ-RECOV-010), with no assistant answer
 * or `completed` made up (TJ-RECOV-004); it must leave the run file alone (TJ-RECOV-012) and the journal a live writer
 * holds (TJ-RECOV-013); and a second `recover` must change nothing (TJ-RECOV-009).
 */
export async function recoveryCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/recover',
    'recover closes exactly the abandoned turns, as spec §12 says, leaves held journals and run files alone, and is idempotent',
    'writer',
    ['TJ-RECOV-004', 'TJ-RECOV-006', 'TJ-RECOV-009', 'TJ-RECOV-010', 'TJ-RECOV-012', 'TJ-RECOV-013', 'TJ-CONF-033'],
    async () => {
      if (!claimsFeature(context.claims, 'recovery')) return { skip: 'feature recovery not claimed' };
      if (!context.claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      const root = freshDir('tj-conf-recovery-');
      try {
        writeRecoveryStore(root);
        const s1 = join(JOURNAL_DIR, 's1.jsonl');
        const s2 = join(JOURNAL_DIR, 's2.jsonl');
        const before = snapshot(root, [s1, s2, RUN_FILE]);
        const failures: string[] = [];
        const answers = await withAdapter(context, async (process) => {
          const first = (await process.request('recover', { root })) as { recovered: unknown[] };
          const afterFirst = snapshot(root, [s1, s2, RUN_FILE]);
          const second = await answerCode(process.request('recover', { root }));
          return { first, afterFirst, second };
        });
        const closed = (answers.first.recovered as { session_id: string; turn_id: string }[])
          .map((t) => `${t.session_id}/${t.turn_id}`)
          .sort();
        if (JSON.stringify(closed) !== '["s1/t1","s1/t3"]')
          failures.push(`recover answered it closed ${JSON.stringify(closed)}, not ["s1/t1","s1/t3"]`);
        const text = answers.afterFirst.get(s1) as string;
        const original = (before.get(s1) as string).slice(0, (before.get(s1) as string).lastIndexOf('\n') + 1);
        if (!text.startsWith(original)) failures.push('the committed lines of s1 were not kept byte for byte');
        const added = text.slice(original.length);
        if (!text.endsWith('\n')) failures.push('s1 does not end with a complete line after recovery');
        const lines = added.split('\n').filter((l) => l.length > 0);
        const records: Record<string, unknown>[] = [];
        for (const line of lines) {
          try {
            records.push(JSON.parse(line) as Record<string, unknown>);
          } catch {
            failures.push(`recovery left a line that is not a record (the torn tail, glued?): ${line.slice(0, 80)}`);
          }
        }
        const byTurn = (id: string) => records.filter((r) => r.turn_id === id);
        for (const [id, streamId] of [
          ['t1', 'st1'],
          ['t3', undefined],
        ] as const) {
          const appended = byTurn(id);
          const expected = { event: 'interrupted', turn_id: id, session_id: 's1', reason: 'server_startup_recovery' };
          if (appended.length !== 1) failures.push(`${id}: ${appended.length} records were appended, not 1`);
          const record = appended[0];
          if (record === undefined) continue;
          for (const [key, value] of Object.entries(expected))
            if (record[key] !== value)
              failures.push(`${id}: the appended record has ${key} ${JSON.stringify(record[key])}`);
          if (streamId !== undefined && record.stream_id !== streamId)
            failures.push(
              `${id}: the interrupted record has stream_id ${JSON.stringify(record.stream_id)}, not ${streamId}`,
            );
        }
        const others = records.filter((r) => r.turn_id !== 't1' && r.turn_id !== 't3');
        if (others.length > 0)
          failures.push(`recovery appended records of other turns: ${JSON.stringify(others).slice(0, 200)}`);
        if (answers.afterFirst.get(s2) !== before.get(s2))
          failures.push('the journal a live writer holds (s2) was changed');
        if (answers.afterFirst.get(RUN_FILE) !== before.get(RUN_FILE)) failures.push('the run file was changed');
        if (answers.second !== 'ok') failures.push(`a second recover was answered ${answers.second}`);
        const afterSecond = snapshot(root, [s1, s2, RUN_FILE]);
        for (const [path, bytes] of answers.afterFirst)
          if (afterSecond.get(path) !== bytes) failures.push(`a second recover changed ${path}`);
        return { failures };
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
}
