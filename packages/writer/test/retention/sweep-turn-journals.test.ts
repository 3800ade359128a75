import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { CrashPlan, orphanLocks } from '../recovery/crash-fs.js';
import { faultyFileSystem } from '../support/faulty-fs.js';
import {
  acquireLock,
  nodeFileSystem,
  openTurnJournal,
  SWEEP_LOCK_NAME,
  sweepTurnJournals,
} from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const HOUR = 3600 * 1000;
const NOW = Date.parse('2026-11-22T12:00:00Z');

/**
 * Session `s` over two shards: `old-done` (completed 3 days ago), `old-cut` (interrupted 3 days ago, records in both
 * shards), `young` (completed 1 hour ago), `pending` (3 days old, still running: a live writer is assumed, so its
 * journal must not be recovered here; the test keeps the shards unlocked, and the audit reports it as abandoned).
 */
async function store(options: { pending?: boolean } = {}): Promise<string> {
  const dir = join(tempDir(), '_turn_journal');
  let now = NOW - 72 * HOUR;
  const clock = () => now;
  const a = await openTurnJournal({ dir, sessionId: 's', shard: 'a', clock });
  const b = await openTurnJournal({ dir, sessionId: 's', shard: 'b', clock });
  await a.submit({ content: 'old and done', turnId: 'old-done' });
  await a.complete('old-done');
  await a.submit({ content: 'old and cut', turnId: 'old-cut' });
  await b.workerStarted('old-cut');
  await b.interrupt('old-cut', 'cancelled');
  if (options.pending === true) await a.submit({ content: 'still running', turnId: 'pending' });
  now = NOW - HOUR;
  await b.submit({ content: 'young', turnId: 'young' });
  await b.complete('young');
  await Promise.all([a.close(), b.close()]);
  return dir;
}

/** The state of every turn of {@link store} before any sweep. */
const ORIGINAL_STATES: Readonly<Record<string, string>> = {
  'old-done': 'completed',
  'old-cut': 'interrupted',
  young: 'completed',
};

function lines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean);
}

async function turnStates(dir: string): Promise<Record<string, string>> {
  const check = await checkStore([dir]);
  return Object.fromEntries(check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state])));
}

describe('sweepTurnJournals: retention (spec §14.1)', () => {
  it('prunes terminal, delivered turns older than the window and keeps every other line byte for byte (TJ-RET-001..006)', async () => {
    const dir = await store();
    const before = { a: lines(join(dir, 's~a.jsonl')), b: lines(join(dir, 's~b.jsonl')) };
    const report = await sweepTurnJournals(dir, { clock: () => NOW });
    expect(report.sessions).toEqual([
      {
        sessionId: 's',
        prunedTurnIds: ['old-cut', 'old-done'],
        rewrittenFiles: [join(dir, 's~a.jsonl'), join(dir, 's~b.jsonl')],
      },
    ]);
    expect(await turnStates(dir)).toEqual({ young: 'completed' });
    const after = { a: lines(join(dir, 's~a.jsonl')), b: lines(join(dir, 's~b.jsonl')) };
    // Shard a held only pruned turns; shard b keeps the young turn's two lines exactly, in order.
    expect(after.a.slice(0, -1)).toEqual([]);
    expect(after.b.slice(0, -1)).toEqual(before.b.filter((line) => line.includes('"young"')));
    for (const file of [after.a, after.b]) {
      expect(JSON.parse(file.at(-1) as string)).toMatchObject({
        event: 'compacted',
        session_id: 's',
        removed_turns: 2,
        removed_turn_ids: ['old-cut', 'old-done'],
        retention_seconds: 48 * 3600,
      });
    }
    const check = await checkStore([dir]);
    expect(check.findings).toEqual([]);
    // No temporary file or lock is left behind (TJ-DUR-009).
    expect(readdirSync(dir).sort()).toEqual(['s~a.jsonl', 's~b.jsonl']);
  });

  it("a failed close of a shard's copy fails the sweep, leaves the shard as it was and no temporary file (TJ-DUR-009, TJ-DUR-037)", async () => {
    const dir = await store();
    const before = { a: lines(join(dir, 's~a.jsonl')), b: lines(join(dir, 's~b.jsonl')) };
    const fs = faultyFileSystem(nodeFileSystem);
    fs.inject({ op: 'close', path: /\.s~a\.jsonl\.[0-9a-f]+\.tmp$/, errno: 'EIO' });
    const failed = await sweepTurnJournals(dir, { clock: () => NOW, fs }).catch((error: unknown) => error);
    expect(fs.fired).toHaveLength(1);
    expect(failed).toMatchObject({ code: 'write_failed', operation: 'close', errno: 'EIO' });
    expect(lines(join(dir, 's~a.jsonl'))).toEqual(before.a);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    // The next sweep does what the failed one could not.
    await sweepTurnJournals(dir, { clock: () => NOW });
    expect(await turnStates(dir)).toEqual({ young: 'completed' });
    expect(lines(join(dir, 's~b.jsonl')).slice(0, -1)).toEqual(before.b.filter((line) => line.includes('"young"')));
  });

  it('removes the lines of the turns it prunes and no other, whatever the derivation made of them (TJ-RET-004, TJ-RET-017)', async () => {
    const dir = await store();
    // A young, completed turn whose id holds a lone surrogate (written as a JSON escape): the derivation keys it as
    // U+FFFD, its lines hold the escape. A sweep that dropped "every turn line not in the derived set" lost it.
    const young = (event: string, at: number) =>
      `{"version":1,"event":"${event}","turn_id":"odd\\ud800","session_id":"s","created_at":${at}${event === 'submitted' ? ',"role":"user","content":"kept"' : ',"terminal":true'}}`;
    const added = [young('submitted', NOW / 1000 - 60), young('completed', NOW / 1000 - 30)];
    appendFileSync(join(dir, 's~b.jsonl'), `${added.join('\n')}\n`);
    expect(await turnStates(dir)).toMatchObject({ 'odd\ufffd': 'completed' });
    const report = await sweepTurnJournals(dir, { clock: () => NOW });
    expect(report.sessions[0]?.prunedTurnIds).toEqual(['old-cut', 'old-done']);
    const after = lines(join(dir, 's~b.jsonl'));
    expect(after.filter((line) => line.includes('odd'))).toEqual(added);
    expect(await turnStates(dir)).toEqual({ young: 'completed', 'odd\ufffd': 'completed' });
    // A second sweep with nothing new to prune keeps them too, and finds nothing to do.
    await sweepTurnJournals(dir, { clock: () => NOW });
    expect(lines(join(dir, 's~b.jsonl'))).toEqual(after);
  });

  it('uses the configured window and the host delivery view (TJ-RET-001, TJ-RET-003)', async () => {
    const dir = await store();
    const report = await sweepTurnJournals(dir, {
      clock: () => NOW,
      retentionSeconds: 30 * 60,
      isDelivered: (_session, turnId) => turnId !== 'old-done',
    });
    expect(report.sessions[0]?.prunedTurnIds).toEqual(['old-cut', 'young']);
    expect(await turnStates(dir)).toEqual({ 'old-done': 'completed' });
  });

  it('does not prune a session whose audit is not clean (TJ-RET-002)', async () => {
    const pendingDir = await store({ pending: true });
    const report = await sweepTurnJournals(pendingDir, { clock: () => NOW });
    expect(report.sessions[0]?.skipped).toMatch(/not clean \(turn_journal_pending_turn\)/);
    const damaged = await store();
    appendFileSync(join(damaged, 's~b.jsonl'), '{not json\n');
    const second = await sweepTurnJournals(damaged, { clock: () => NOW });
    expect(second.sessions[0]?.skipped).toMatch(/malformed_line/);
    expect(Object.keys(await turnStates(damaged)).sort()).toEqual(['old-cut', 'old-done', 'young']);
  });

  it('skips a session a live writer holds (TJ-RET-008, TJ-RET-009), and a dry run writes nothing', async () => {
    const dir = await store();
    const bytes = readFileSync(join(dir, 's~a.jsonl'));
    const dry = await sweepTurnJournals(dir, { clock: () => NOW, dryRun: true });
    expect(dry.sessions[0]?.prunedTurnIds).toEqual(['old-cut', 'old-done']);
    expect(readFileSync(join(dir, 's~a.jsonl'))).toEqual(bytes);
    const live = await openTurnJournal({ dir, sessionId: 's', shard: 'b' });
    const report = await sweepTurnJournals(dir, { clock: () => NOW });
    expect(report.sessions[0]?.skipped).toMatch(/live writer holds .*s~b\.jsonl/);
    await live.close();
    expect(readFileSync(join(dir, 's~a.jsonl'))).toEqual(bytes);
  });

  it('keeps two sweeps apart with the directory lock (TJ-RET-010)', async () => {
    const dir = await store();
    const other = await acquireLock(nodeFileSystem, join(dir, SWEEP_LOCK_NAME), dir);
    await expect(sweepTurnJournals(dir, { clock: () => NOW })).rejects.toMatchObject({ code: 'journal_locked' });
    await other.release();
    expect((await sweepTurnJournals(dir, { clock: () => NOW })).sessions[0]?.prunedTurnIds).toHaveLength(2);
  });

  it('reaches the end state of an uninterrupted sweep after a crash at any step and a rerun (TJ-RET-005, TJ-RET-007)', async () => {
    const reference = await store();
    await sweepTurnJournals(reference, { clock: () => NOW });
    const expected = await turnStates(reference);
    let crashes = 0;
    for (let at = 0; ; at++) {
      const dir = await store();
      const plan = new CrashPlan(at);
      await sweepTurnJournals(dir, { clock: () => NOW, fs: plan.fileSystem() }).catch(() => undefined);
      if (!plan.crashed) break;
      crashes++;
      orphanLocks(dir);
      // Between the crash and the rerun, readers see every retained turn, and every turn they see keeps its state:
      // a pruned turn is either still whole or gone, never half-removed into another state.
      const between = await turnStates(dir);
      expect(Object.keys(between), `crash at ${at}`).toEqual(expect.arrayContaining(Object.keys(expected)));
      for (const [turnId, state] of Object.entries(between))
        expect(state, `crash at ${at}: ${turnId}`).toBe(ORIGINAL_STATES[turnId]);
      await sweepTurnJournals(dir, { clock: () => NOW });
      expect(await turnStates(dir), `crash at step ${at}`).toEqual(expected);
      const check = await checkStore([dir]);
      expect(check.findings, `crash at step ${at}`).toEqual([]);
      const names = readdirSync(dir).filter((name) => !name.endsWith('.lock'));
      expect(names.sort(), `crash at step ${at}: no temporary file left`).toEqual(['s~a.jsonl', 's~b.jsonl']);
    }
    expect(crashes).toBeGreaterThan(20);
  }, 60_000);
});
