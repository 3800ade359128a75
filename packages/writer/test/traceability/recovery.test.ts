// Coverage of startup recovery (spec §12) against the reference writer: what it may do, in which order, and what it
// re-checks under the lock.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTurnJournal, type RecoveryHooks, recoverStore, type TurnJournal } from '../support/internals.js';
import { tempDir } from '../support/temp.js';
import { TraceFileSystem } from './trace-fs.js';

/** A store with two abandoned turns in one journal (t1 worker_started, t2 assistant_started); the writer is gone. */
async function abandoned(): Promise<{ dir: string; file: string }> {
  const dir = join(tempDir(), '_turn_journal');
  const journal = await openTurnJournal({ dir, sessionId: 's' });
  await journal.submit({ content: 'first', turnId: 't1' });
  await journal.workerStarted('t1');
  await journal.submit({ content: 'second', turnId: 't2' });
  await journal.assistantStarted('t2', { assistantMessageIndex: 1 });
  await journal.close();
  return { dir, file: join(dir, 's.jsonl') };
}

function records(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('startup recovery (spec §12)', () => {
  it('never resumes or repeats a provider call: it calls only the two transcript hooks and appends only interrupted (TJ-RECOV-005)', async () => {
    const { dir, file } = await abandoned();
    const before = readFileSync(file, 'utf8');
    const called: string[] = [];
    // A host object that also offers ways to continue a turn: recovery must use none of them.
    const host = {
      ensureUserMessage: (turn: { turnId: string }) => void called.push(`user:${turn.turnId}`),
      ensureInterruptionMarker: (turn: { turnId: string }) => void called.push(`marker:${turn.turnId}`),
      callProvider: () => void called.push('provider'),
      resumeTurn: () => void called.push('resume'),
      appendAssistantMessage: () => void called.push('assistant'),
    };
    const result = await recoverStore([dir], { apply: true, hooks: host as RecoveryHooks });
    expect(result.turns.map((t) => t.outcome)).toEqual(['recovered', 'recovered']);
    expect(called.sort()).toEqual(['marker:t1', 'marker:t2', 'user:t1', 'user:t2']);
    const after = readFileSync(file, 'utf8');
    expect(after.startsWith(before)).toBe(true);
    const added = records(file).slice(before.split('\n').length - 1);
    expect(added.map((r) => [r.turn_id, r.event, r.reason])).toEqual([
      ['t1', 'interrupted', 'server_startup_recovery'],
      ['t2', 'interrupted', 'server_startup_recovery'],
    ]);
    // A second run has nothing to do: no call is repeated.
    called.length = 0;
    await recoverStore([dir], { apply: true, hooks: host as RecoveryHooks });
    expect(called).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(after);
  });

  // The interrupted records of one journal are batched (issue 11): a turn's hooks may run while the record of the turn
  // before it is in flight, and each record is acknowledged (and the recovery returns) only once a sync covered it.
  it('makes each interrupted record durable, after the hooks of its own turn, before it acknowledges the step (TJ-RECOV-007)', async () => {
    const { dir, file } = await abandoned();
    const fs = new TraceFileSystem();
    const hooks: RecoveryHooks = {
      ensureUserMessage: (turn) => fs.mark(`user:${turn.turnId}`),
      ensureInterruptionMarker: (turn) => fs.mark(`marker:${turn.turnId}`),
    };
    const result = await recoverStore([dir], { apply: true, hooks, fs });
    fs.mark('done');
    expect(result.turns.map((t) => [t.turnId, t.performed.at(-1)])).toEqual([
      ['t1', 'append_interrupted'],
      ['t2', 'append_interrupted'],
    ]);
    const at = (label: string) => fs.marks.find((m) => m.label === label)?.at as number;
    for (const [turnId, next] of [
      ['t1', 'done'],
      ['t2', 'done'],
    ] as const) {
      const write = fs.calls.find(
        (c) =>
          c.op === 'write' &&
          c.path === file &&
          c.bytes?.includes(`"turn_id":"${turnId}"`) &&
          c.bytes.includes('"interrupted"'),
      );
      expect(write, `no write of interrupted for ${turnId}`).toBeDefined();
      expect(write?.done).toBeGreaterThan(at(`marker:${turnId}`));
      const sync = fs.calls.find(
        (c) => (c.op === 'fdatasync' || c.op === 'fsync') && c.path === file && c.done > (write?.done as number),
      );
      expect(sync, `interrupted of ${turnId} was never synced`).toBeDefined();
      expect(sync?.done).toBeLessThan(at(next));
    }
  });

  it('takes the writer lock, then reads the turn again, and skips a turn that became terminal since the audit (TJ-RECOV-013)', async () => {
    const { dir, file } = await abandoned();
    const fs = new TraceFileSystem();
    let injected = false;
    // Between the audit and the append, another process completes t1 (and is gone again).
    fs.before = (op) => {
      if (injected || op !== 'open') return;
      injected = true;
      appendFileSync(
        file,
        `${JSON.stringify({ version: 1, event: 'completed', turn_id: 't1', session_id: 's', created_at: 9 })}\n`,
      );
    };
    const result = await recoverStore([dir], {
      apply: true,
      hooks: { ensureUserMessage() {}, ensureInterruptionMarker() {} },
      fs,
    });
    expect(injected).toBe(true);
    expect(Array.from(result.plan, (p) => p.turnId)).toEqual(['t1', 't2']);
    expect(result.turns.map((t) => [t.turnId, t.outcome])).toEqual([
      ['t1', 'skipped'],
      ['t2', 'recovered'],
    ]);
    expect(
      records(file)
        .filter((r) => r.event === 'interrupted')
        .map((r) => r.turn_id),
    ).toEqual(['t2']);
    // The lock was taken before the journal was read for the re-check.
    const locked = fs.calls.find((c) => c.op === 'link' && c.path === `${file}.lock`);
    const read = fs.calls.find((c) => c.op === 'read' && c.path === file);
    expect(locked).toBeDefined();
    expect(read).toBeDefined();
    expect(locked?.done).toBeLessThan(read?.done as number);
  });

  it('skips the turns of a file a live writer took since the audit, appending nothing (TJ-RECOV-013)', async () => {
    const { dir, file } = await abandoned();
    const before = readFileSync(file, 'utf8');
    const fs = new TraceFileSystem();
    let live: Promise<TurnJournal> | undefined;
    fs.before = async (op) => {
      if (live !== undefined || op !== 'open') return;
      live = openTurnJournal({ file, sessionId: 's' });
      await live;
    };
    const result = await recoverStore([dir], {
      apply: true,
      hooks: { ensureUserMessage() {}, ensureInterruptionMarker() {} },
      fs,
    });
    expect(live).toBeDefined();
    expect(result.turns.map((t) => t.outcome)).toEqual(['skipped', 'skipped']);
    expect(result.turns[0]?.reason).toMatch(/lock/i);
    expect(readFileSync(file, 'utf8')).toBe(before);
    await (await (live as Promise<TurnJournal>)).close();
  });
});
