import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { AdapterProcess } from '../../process.js';
import { freshDir } from '../fresh-dir.js';
import { compactCheck, compactSplitCheck } from './compaction.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { claimsFeature, plantLock } from './support.js';

// The checks of feature `retention` (adapter.md §5.6): the sweep of turn journals (spec §14.1) here, and the compaction
// of an event log (spec §14.2) in compaction.ts, on stores the harness writes with known ages, at a `now` the harness
// gives.

const JOURNAL_DIR = '_turn_journal';
/** The harness's "now": every age below is relative to it. */
const NOW_MS = Date.UTC(2026, 5, 20, 12, 0, 0);
const NOW_S = NOW_MS / 1000;
const HOUR_S = 3600;

/** Plants the lock of `file` as a live writer holds it: the harness's own pid, on this host (spec §4.5). */
const holdLock = (file: string) =>
  plantLock(file, { pid: process.pid, host: hostname(), token: 'tj-conformance-holder' });

// ---------------------------------------------------------------------------------------------------------------
// The sweep

const turnLine = (event: string, turnId: string, session: string, createdAt: number, extra = '') =>
  `{"version":1,"event":"${event}","turn_id":"${turnId}","session_id":"${session}","created_at":${createdAt}${extra}}`;
const submittedLine = (turnId: string, session: string, createdAt: number, content = `hello ${turnId}`) =>
  turnLine('submitted', turnId, session, createdAt, `,"role":"user","content":${JSON.stringify(content)}`);

/** A journal file the sweep store holds: its lines, and the turn each line belongs to (null: no turn's). */
interface PlannedFile {
  readonly path: string;
  readonly lines: readonly { readonly text: string; readonly turn: string | null }[];
}

/**
 * The store of `writer/sweep`, at `NOW` with a window of 2 hours:
 * - `a.jsonl`: `t1` completed 2 h 2 min ago (pruned); `t2` completed 10 min ago, written with non-canonical bytes
 *   (an escaped `é`, spaces) that must survive byte for byte (kept); `t3` submitted 3 h ago but completed 10 min ago
 *   — its newest record is young (kept); `t4` interrupted 3 h ago (terminal: pruned); an extension record of type
 *   `x.acme.note` naming turn `zz`, which no derived turn takes in (kept, TJ-RET-017);
 * - `b.jsonl`: an old completed turn and a line that is not JSON: the audit is not clean, nothing goes (TJ-RET-002);
 * - `c.jsonl` and its shard `c~4242.jsonl`: `t5` old in the first, `t7` old in the shard, `t6` young in the shard:
 *   both files rewritten, each ending with a `compacted` record listing `t5` and `t7` (TJ-RET-006, TJ-RET-007);
 * - `d.jsonl`: an old completed turn, in a file whose lock a live writer holds (TJ-RET-009).
 */
function sweepStore(root: string, old: number, young: number): PlannedFile[] {
  const dir = join(root, JOURNAL_DIR);
  const done = (id: string, session: string, at: number) => [
    { text: submittedLine(id, session, at), turn: id },
    { text: turnLine('worker_started', id, session, at), turn: id },
    { text: turnLine('completed', id, session, at, ',"terminal":true'), turn: id },
  ];
  const files: PlannedFile[] = [
    {
      path: join(dir, 'a.jsonl'),
      lines: [
        ...done('t1', 'a', old),
        {
          text: `{"version":1, "event":"submitted","turn_id":"t2","session_id":"a","created_at":${young},"role":"user","content":"caf\\u00e9"}`,
          turn: 't2',
        },
        { text: turnLine('completed', 't2', 'a', young, ',"terminal":true,"x_acme_tag":[1,{"k":null}]'), turn: 't2' },
        { text: submittedLine('t3', 'a', old - HOUR_S), turn: 't3' },
        { text: turnLine('completed', 't3', 'a', young, ',"terminal":true'), turn: 't3' },
        { text: submittedLine('t4', 'a', old), turn: 't4' },
        {
          text: turnLine('interrupted', 't4', 'a', old, ',"reason":"server_startup_recovery","terminal":true'),
          turn: 't4',
        },
        { text: `{"version":1,"event":"x.acme.note","turn_id":"zz","created_at":${old},"note":"keep me"}`, turn: null },
      ],
    },
    { path: join(dir, 'b.jsonl'), lines: [...done('t8', 'b', old), { text: 'not json', turn: null }] },
    { path: join(dir, 'c.jsonl'), lines: done('t5', 'c', old) },
    { path: join(dir, 'c~4242.jsonl'), lines: [...done('t7', 'c', old), ...done('t6', 'c', young)] },
    { path: join(dir, 'd.jsonl'), lines: done('t9', 'd', old) },
  ];
  mkdirSync(dir, { recursive: true });
  for (const file of files) writeFileSync(file.path, file.lines.map((line) => `${line.text}\n`).join(''));
  holdLock(join(dir, 'd.jsonl'));
  return files;
}

/** Every file of the directory with its bytes (as latin1, so that any byte compares), by name. */
function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) files.set(name, readFileSync(join(dir, name), 'latin1'));
  return files;
}

/** `{session: [turn ids]}` of a sweep answer, sorted, sessions with no pruned turn left out. */
function prunedBySession(answer: unknown, failures: string[]): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const session of (answer as { sessions: { session_id: string; pruned: string[] }[] }).sessions) {
    if (session.pruned.length === 0) continue;
    if (result[session.session_id] !== undefined) failures.push(`the answer lists session ${session.session_id} twice`);
    result[session.session_id] = [...(result[session.session_id] ?? []), ...session.pruned].sort();
  }
  return result;
}

/**
 * Checks a rewritten file: its retained lines, byte for byte and in order, then exactly one `compacted` record of the
 * session giving the sweep's `removed_turns` (TJ-RET-005, TJ-RET-006). Returns the ids its `removed_turn_ids` lists,
 * null when the file is already wrong (a failure was recorded).
 */
function expectRewritten(
  file: PlannedFile,
  bytes: string,
  pruned: readonly string[],
  session: string,
  failures: string[],
): string[] | null {
  const name = file.path.slice(file.path.lastIndexOf('/') + 1);
  const kept = file.lines
    .filter((line) => line.turn === null || !pruned.includes(line.turn))
    .map((line) => `${line.text}\n`)
    .join('');
  const expectedBytes = Buffer.from(kept, 'utf8').toString('latin1');
  if (!bytes.startsWith(expectedBytes)) {
    failures.push(
      `${name}: the retained lines are not the original lines minus those of ${pruned.join(', ')}, byte for byte and in order`,
    );
    return null;
  }
  const rest = bytes.slice(expectedBytes.length);
  const lines = rest.split('\n');
  if (lines.length !== 2 || lines[1] !== '') {
    failures.push(`${name}: after the retained lines comes ${JSON.stringify(rest.slice(0, 200))}, not one line`);
    return null;
  }
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(lines[0] as string) as Record<string, unknown>;
  } catch {
    failures.push(`${name}: the last line is not a record: ${JSON.stringify((lines[0] as string).slice(0, 120))}`);
    return null;
  }
  if (record.event !== 'compacted' || record.version !== 1 || record.session_id !== session)
    failures.push(`${name}: the last line is not a compacted record of session ${session}: ${lines[0]}`);
  if (record.removed_turns !== pruned.length)
    failures.push(`${name}: removed_turns is ${JSON.stringify(record.removed_turns)}, not ${pruned.length}`);
  const ids = Array.isArray(record.removed_turn_ids) ? (record.removed_turn_ids as unknown[]) : [];
  const strange = ids.filter((id) => typeof id !== 'string' || !pruned.includes(id));
  if (strange.length > 0)
    failures.push(`${name}: removed_turn_ids lists turns this sweep did not prune: ${JSON.stringify(strange)}`);
  return ids.filter((id): id is string => typeof id === 'string');
}

/**
 * `writer/sweep` (feature `retention`): with the directory lock held by another sweep, `sweep` is answered an error
 * and changes nothing (TJ-RET-010); then, on the store of {@link sweepStore}, it prunes exactly `t1`, `t4`, `t5`,
 * `t7` — not the young, partly young, unclean-session or held turns (TJ-RET-002, -003, -009) — and rewrites exactly
 * `a.jsonl`, `c.jsonl` and `c~4242.jsonl`, retained lines byte for byte (TJ-RET-004, -005, -017, TJ-COMPAT-004), each
 * ending with one
 * `compacted` record (TJ-RET-006, -007), and answers exactly what it pruned (TJ-CONF-034). Last, a sweep without a
 * window uses 48 hours (TJ-RET-001): of two turns completed 49 h and 47 h ago, only the first goes.
 */
export async function sweepCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/sweep',
    'the sweep prunes exactly the eligible turns of clean, unheld sessions, keeps every other line byte for byte, ends each rewritten file with its compacted record, and respects the directory lock',
    'writer',
    [
      'TJ-RET-001',
      'TJ-RET-002',
      'TJ-RET-003',
      'TJ-RET-004',
      'TJ-RET-005',
      'TJ-RET-006',
      'TJ-RET-007',
      'TJ-RET-009',
      'TJ-RET-010',
      'TJ-RET-017',
      'TJ-COMPAT-004',
      'TJ-CONF-034',
    ],
    async () => {
      if (!claimsFeature(context.claims, 'retention')) return { skip: 'feature retention not claimed' };
      if (!context.claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      const root = freshDir('tj-conf-sweep-');
      try {
        const failures: string[] = [];
        const window = 2 * HOUR_S;
        const files = sweepStore(root, NOW_S - window - 120, NOW_S - 600);
        const dir = join(root, JOURNAL_DIR);
        const original = filesOf(dir);
        await withAdapter(context, async (adapter) => {
          await sweepWithDirectoryLockHeld(adapter, root, dir, window, original, failures);
          const answer = await adapter.request('sweep', { root, now: NOW_MS, window_s: window });
          const pruned = prunedBySession(answer, failures);
          const expected = { a: ['t1', 't4'], c: ['t5', 't7'] };
          if (JSON.stringify(pruned) !== JSON.stringify(expected))
            failures.push(`sweep answered it pruned ${JSON.stringify(pruned)}, not ${JSON.stringify(expected)}`);
          const after = filesOf(dir);
          const listed = new Map<string, string[] | null>();
          for (const file of files) {
            const name = file.path.slice(dir.length + 1);
            const bytes = after.get(name);
            if (bytes === undefined) {
              failures.push(`${name} is gone after the sweep`);
              continue;
            }
            const session = name.slice(0, 1) as 'a' | 'b' | 'c' | 'd';
            if (session === 'a' || session === 'c')
              listed.set(name, expectRewritten(file, bytes, expected[session], session, failures));
            else if (bytes !== original.get(name))
              failures.push(
                session === 'b'
                  ? `${name} changed although its audit is not clean (a line is not JSON)`
                  : `${name} changed although a live writer holds its lock`,
              );
          }
          // TJ-RET-007: the first file replaced lists every turn pruned from the session; which file came first the
          // harness cannot see, so one of the two must.
          const full = (name: string) => JSON.stringify([...(listed.get(name) ?? [])].sort());
          const wellFormed = (...names: string[]) => names.every((name) => listed.get(name) !== null);
          if (wellFormed('a.jsonl') && full('a.jsonl') !== '["t1","t4"]')
            failures.push(`a.jsonl: removed_turn_ids is ${full('a.jsonl')}, not ["t1","t4"]`);
          if (wellFormed('c.jsonl', 'c~4242.jsonl') && ![full('c.jsonl'), full('c~4242.jsonl')].includes('["t5","t7"]'))
            failures.push(
              `neither file of session c has a compacted record listing both t5 and t7 (${full('c.jsonl')}, ${full('c~4242.jsonl')}): a crash between the two files would leave remnants §10.2 cannot ignore`,
            );
          const extra = [...after.keys()].filter((name) => !original.has(name));
          if (extra.length > 0) failures.push(`the sweep left files behind: ${extra.join(', ')}`);
          await sweepWithDefaultWindow(adapter, failures);
        });
        return { failures };
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
}

/** With another sweep's live directory lock in place, `sweep` must be refused and change nothing (TJ-RET-010). */
async function sweepWithDirectoryLockHeld(
  adapter: AdapterProcess,
  root: string,
  dir: string,
  window: number,
  original: ReadonlyMap<string, string>,
  failures: string[],
): Promise<void> {
  const lock = join(dir, '.turnjournal-sweep.lock');
  const lockBytes = holdLock(join(dir, '.turnjournal-sweep'));
  const code = await answerCode(adapter.request('sweep', { root, now: NOW_MS, window_s: window }));
  if (code === 'ok') failures.push('sweep succeeded while another sweep held the directory lock');
  const during = filesOf(dir);
  if (during.get('.turnjournal-sweep.lock') !== lockBytes)
    failures.push('the sweep removed or rewrote the directory lock another sweep holds');
  during.delete('.turnjournal-sweep.lock');
  for (const [name, bytes] of original)
    if (during.get(name) !== bytes) failures.push(`${name} changed while another sweep held the directory lock`);
  rmSync(lock);
}

/** A sweep without `window_s` uses 48 hours (TJ-RET-001). */
async function sweepWithDefaultWindow(adapter: AdapterProcess, failures: string[]): Promise<void> {
  const root = freshDir('tj-conf-sweep-default-');
  try {
    const dir = join(root, JOURNAL_DIR);
    mkdirSync(dir, { recursive: true });
    const lines = (id: string, at: number) =>
      `${submittedLine(id, 'e', at)}\n${turnLine('completed', id, 'e', at, ',"terminal":true')}\n`;
    writeFileSync(join(dir, 'e.jsonl'), lines('t49h', NOW_S - 49 * HOUR_S) + lines('t47h', NOW_S - 47 * HOUR_S));
    const answer = await adapter.request('sweep', { root, now: NOW_MS });
    const pruned = prunedBySession(answer, failures);
    if (JSON.stringify(pruned) !== '{"e":["t49h"]}')
      failures.push(
        `a sweep without a window pruned ${JSON.stringify(pruned)}, not t49h only (the default window is 48 hours)`,
      );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The checks of feature `retention`. */
export async function retentionChecks(context: WriterContext): Promise<void> {
  await sweepCheck(context);
  await compactCheck(context);
  await compactSplitCheck(context);
}
