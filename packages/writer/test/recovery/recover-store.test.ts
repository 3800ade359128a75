import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem, isSpaceWrite, recordingFileSystem } from '../support/faulty-fs.js';
import {
  JOURNAL_ONLY_HOOKS,
  nodeFileSystem,
  openEventLog,
  openTurnJournal,
  type RecoveryHooks,
  recoverStore,
} from '../support/internals.js';
import { readLinesOf } from '../support/space.js';
import { tempDir } from '../support/temp.js';
import { CrashPlan, orphanLocks, SimulatedCrash } from './crash-fs.js';

/** An in-memory host transcript whose hooks are idempotent and keyed by turn id (TJ-RECOV-008). */
class Transcript {
  readonly userMessages = new Map<string, string>();
  readonly markers = new Set<string>();
  calls = 0;
  constructor(readonly plan?: CrashPlan) {}
  hooks(): RecoveryHooks {
    return {
      ensureUserMessage: (turn, submitted) => {
        this.plan?.step();
        this.calls++;
        if (!this.userMessages.has(turn.turnId)) this.userMessages.set(turn.turnId, String(submitted.content));
      },
      ensureInterruptionMarker: (turn) => {
        this.plan?.step();
        this.calls++;
        this.markers.add(turn.turnId);
      },
    };
  }
}

/** A store with a completed turn, an interrupted one and three pending ones in two shards, all writers gone. */
async function abandonedStore(): Promise<string> {
  const dir = join(tempDir(), '_turn_journal');
  const a = await openTurnJournal({ dir, sessionId: 'sess', shard: '1' });
  const b = await openTurnJournal({ dir, sessionId: 'sess', shard: '2' });
  const done = await a.submit({ content: 'done', turnId: 't-done' });
  await a.complete(done.turnId);
  await a.submit({ content: 'was cancelled', turnId: 't-cancel' });
  await a.interrupt('t-cancel', 'cancelled');
  await a.submit({ content: 'pending one', turnId: 't-p1', streamId: 'stream-1' });
  await a.workerStarted('t-p1');
  await b.submit({ content: 'pending two', turnId: 't-p2' });
  await b.assistantStarted('t-p2', { assistantMessageIndex: 4 });
  await a.submit({ content: 'pending three', turnId: 't-p3' });
  await b.workerStarted('t-p3');
  await Promise.all([a.close(), b.close()]);
  return dir;
}

function causedByCrash(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) if (e instanceof SimulatedCrash) return true;
  return false;
}

async function states(dir: string): Promise<Record<string, string>> {
  const check = await checkStore([dir]);
  return Object.fromEntries(check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state])));
}

function interruptedRecords(dir: string): Record<string, unknown>[] {
  return (
    readdirSync(dir)
      .filter((name) => name.endsWith('.jsonl'))
      // Without the pre-allocated space a crashed writer leaves after its lines (spec §3.8).
      .flatMap((name) => readLinesOf(join(dir, name)).toString('utf8').split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.event === 'interrupted' && record.reason === 'server_startup_recovery')
  );
}

describe('recoverStore: startup recovery (spec §12)', () => {
  it('plans without side effects, then closes exactly the abandoned turns through the hooks (TJ-RECOV-001..003, TJ-RECOV-006)', async () => {
    const dir = await abandonedStore();
    const before = readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]);
    const planned = await recoverStore([dir]);
    expect(Array.from(planned.plan, (p) => p.turnId).sort()).toEqual(['t-p1', 't-p2', 't-p3']);
    expect(planned.turns).toEqual([]);
    expect(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')])).toEqual(before);

    const transcript = new Transcript();
    const applied = await recoverStore([dir], { apply: true, hooks: transcript.hooks() });
    expect(applied.turns.map((t) => [t.turnId, t.outcome, t.performed])).toEqual(
      ['t-p1', 't-p2', 't-p3'].map((id) => [
        id,
        'recovered',
        ['ensure_user_message', 'ensure_interruption_marker', 'append_interrupted'],
      ]),
    );
    expect(await states(dir)).toEqual({
      't-done': 'completed',
      't-cancel': 'interrupted',
      't-p1': 'interrupted',
      't-p2': 'interrupted',
      't-p3': 'interrupted',
    });
    expect([...transcript.userMessages]).toEqual([
      ['t-p1', 'pending one'],
      ['t-p2', 'pending two'],
      ['t-p3', 'pending three'],
    ]);
    const records = interruptedRecords(dir);
    expect(records.map((r) => [r.turn_id, r.session_id, r.stream_id])).toEqual(
      expect.arrayContaining([
        ['t-p1', 'sess', 'stream-1'],
        ['t-p2', 'sess', undefined],
        ['t-p3', 'sess', undefined],
      ]),
    );
    expect(records).toHaveLength(3);
    // No assistant answer was fabricated (TJ-RECOV-004): the only records added are the three interruptions.
    const check = await checkStore([dir]);
    expect(check.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('is idempotent: a second run finds nothing to do (TJ-RECOV-009)', async () => {
    const dir = await abandonedStore();
    await recoverStore([dir], { apply: true, hooks: JOURNAL_ONLY_HOOKS });
    const again = await recoverStore([dir], { apply: true, hooks: JOURNAL_ONLY_HOOKS });
    expect([...again.plan]).toEqual([]);
    expect(interruptedRecords(dir)).toHaveLength(3);
  });

  it('leaves turns whose journal a live writer holds alone (TJ-RECOV-002)', async () => {
    const dir = await abandonedStore();
    const live = await openTurnJournal({ dir, sessionId: 'sess', shard: '2' });
    const result = await recoverStore([dir], { apply: true, hooks: JOURNAL_ONLY_HOOKS });
    // t-p2 and t-p3 have records in shard 2, which is held; t-p1 lives in shard 1 only.
    expect(Array.from(result.plan, (p) => p.turnId)).toEqual(['t-p1']);
    expect(result.heldFiles).toEqual([join(dir, 'sess~2.jsonl')]);
    await live.close();
    expect((await states(dir))['t-p2']).toBe('assistant_started');
  });

  it('refuses to apply without hooks', async () => {
    const dir = await abandonedStore();
    await expect(recoverStore([dir], { apply: true })).rejects.toMatchObject({ code: 'invalid_option' });
  });

  it('reaches the same end state after a crash at every step and a rerun (TJ-RECOV-009, TJ-RECOV-010)', async () => {
    const reference = await abandonedStore();
    const referenceTranscript = new Transcript();
    await recoverStore([reference], { apply: true, hooks: referenceTranscript.hooks() });
    const expectedStates = await states(reference);

    let crashes = 0;
    for (let at = 0; ; at++) {
      const dir = await abandonedStore();
      const plan = new CrashPlan(at);
      const transcript = new Transcript(plan);
      try {
        await recoverStore([dir], { apply: true, hooks: transcript.hooks(), fs: plan.fileSystem() });
      } catch (error) {
        expect(causedByCrash(error), String(error)).toBe(true);
      }
      if (!plan.crashed) break; // the whole recovery ran in fewer steps than `at`: every step has been crashed at
      crashes++;
      orphanLocks(dir);
      const rerunTranscript = new Transcript();
      // The host transcript survives the crash: carry over what the crashed run's hooks added.
      for (const [id, text] of transcript.userMessages) rerunTranscript.userMessages.set(id, text);
      for (const id of transcript.markers) rerunTranscript.markers.add(id);
      await recoverStore([dir], { apply: true, hooks: rerunTranscript.hooks() });
      expect(await states(dir), `crash at step ${at}`).toEqual(expectedStates);
      expect([...rerunTranscript.userMessages].sort(), `crash at step ${at}`).toEqual(
        [...referenceTranscript.userMessages].sort(),
      );
      expect([...rerunTranscript.markers].sort()).toEqual([...referenceTranscript.markers].sort());
      const perTurn = interruptedRecords(dir).map((r) => r.turn_id);
      expect(perTurn.sort(), `crash at step ${at}: one interrupted record per turn`).toEqual(['t-p1', 't-p2', 't-p3']);
      const check = await checkStore([dir]);
      expect(check.findings.filter((f) => f.severity === 'error')).toEqual([]);
    }
    expect(crashes).toBeGreaterThan(20);
  }, 60_000);
});

describe('recoverStore: many pending turns in one journal (issue 11)', () => {
  it('opens the journal once for all its planned turns, not once per turn (TJ-RECOV-002)', async () => {
    const dir = join(tempDir(), '_turn_journal');
    const journal = await openTurnJournal({ dir, sessionId: 'many', durability: 'group' });
    const pending = 25;
    for (let i = 0; i < pending; i += 1) await journal.submit({ content: `pending ${i}`, turnId: `t-${i}` });
    await journal.close();
    const opened: string[] = [];
    const fs = {
      ...nodeFileSystem,
      open: (path: string, mode: Parameters<typeof nodeFileSystem.open>[1]) => {
        opened.push(path);
        return nodeFileSystem.open(path, mode);
      },
    };
    const file = join(dir, 'many.jsonl');
    // What one open of the journal costs in opens of its file (the writer reads it, then appends).
    await (await openTurnJournal({ file, sessionId: 'many', fs })).close();
    const perOpen = opened.filter((path) => path === file).length;
    opened.length = 0;
    const recovery = await recoverStore([dir], { apply: true, hooks: JOURNAL_ONLY_HOOKS, fs });
    expect(recovery.turns.map((t) => t.outcome)).toEqual(Array(pending).fill('recovered'));
    expect(perOpen).toBeGreaterThan(0);
    expect(opened.filter((path) => path === file)).toHaveLength(perOpen);
    expect(Object.values(await states(dir))).toEqual(Array(pending).fill('interrupted'));
  });
});

/** A journal `many.jsonl` of `pending` submitted turns `t-0`, `t-1`, … whose writer is gone. */
async function manyPending(pending: number): Promise<{ dir: string; file: string }> {
  const dir = join(tempDir(), '_turn_journal');
  const journal = await openTurnJournal({ dir, sessionId: 'many', durability: 'group' });
  await Promise.all(
    Array.from({ length: pending }, (_, i) => journal.submit({ content: `pending ${i}`, turnId: `t-${i}` })),
  );
  await journal.close();
  return { dir, file: join(dir, 'many.jsonl') };
}

describe('recoverStore: the interrupted records of one journal, batched (issue 11)', () => {
  it.each([
    [40, 2],
    // Batches of at most 1,024 turns in flight: three of them, two syncs each.
    [2500, 6],
  ])(
    'makes %i records durable with %i syncs of the journal, not one per turn, each acknowledged after its sync (TJ-RECOV-007)',
    async (pending, expectedSyncs) => {
      const { dir, file } = await manyPending(pending);
      const fs = recordingFileSystem(nodeFileSystem);
      const recovery = await recoverStore([dir], { apply: true, hooks: JOURNAL_ONLY_HOOKS, fs });
      // In the plan's order: turn ids in code-point order.
      const ids = Array.from({ length: pending }, (_, i) => `t-${i}`).sort();
      expect(recovery.turns.map((t) => [t.turnId, t.outcome, t.performed.at(-1)])).toEqual(
        ids.map((id) => [id, 'recovered', 'append_interrupted']),
      );
      const journalCalls = fs.calls.filter((c) => c.path === file);
      const writes = journalCalls.filter((c) => c.op === 'write' && c.ok && !isSpaceWrite(c));
      // The space the writer extends ahead of the lines, in the background, comes with a sync of its own.
      const spaceWrites = journalCalls.filter((c) => c.ok && isSpaceWrite(c)).length;
      // Opening the journal syncs it once (before any record is appended); then the records: the first one alone
      // (nothing was in flight), then the rest in one write while its sync ran, each write followed by one sync.
      const firstWrite = writes[0]?.start ?? Number.POSITIVE_INFINITY;
      const syncs = journalCalls.filter(
        (c) => (c.op === 'fdatasync' || c.op === 'fsync') && c.ok && c.start > firstWrite,
      );
      expect(writes).toHaveLength(expectedSyncs);
      expect(syncs).toHaveLength(expectedSyncs + spaceWrites);
      // Every interrupted record is in a write that ended before a sync that followed it started (TJ-DUR-003).
      const lastWrite = writes.at(-1);
      expect(syncs.some((sync) => lastWrite?.end !== undefined && sync.start > lastWrite.end)).toBe(true);
      expect(interruptedRecords(dir).map((r) => r.turn_id)).toEqual(ids);
      expect(Object.values(await states(dir))).toEqual(Array(pending).fill('interrupted'));
    },
  );

  it('leaves a valid state when the process dies in the middle of a batch, and a rerun closes the rest (TJ-RECOV-009)', async () => {
    const pending = 12;
    const { dir, file } = await manyPending(pending);
    // The batch's write (the second of the journal) tears in its middle, and the process dies there: nothing after it
    // reaches the disk, not even the truncation back of the torn line.
    let dead = false;
    const fs = faultyFileSystem(nodeFileSystem, [
      {
        op: 'write',
        path: 'many.jsonl',
        nth: 2,
        torn: (length) => Math.floor(length / 2) + 7,
        before: () => {
          dead = true;
        },
      },
    ]);
    fs.before = (op) => {
      if (dead && op !== 'write') throw new SimulatedCrash(0);
    };
    // The torn write is the failure the caller sees: the process died in it (every later call throws SimulatedCrash).
    await expect(recoverStore([dir], { apply: true, hooks: JOURNAL_ONLY_HOOKS, fs })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'write',
      errno: 'EIO',
      file,
    });
    expect(fs.fired.map((f) => f.path)).toEqual([file]);
    orphanLocks(dir);
    // What the crash left: some turns closed by whole lines, the rest still pending, the torn line a torn tail.
    const after = await states(dir);
    const closed = Object.values(after).filter((state) => state === 'interrupted').length;
    expect(closed).toBeGreaterThan(1);
    expect(closed).toBeLessThan(pending);
    expect(Object.values(after).every((state) => state === 'interrupted' || state === 'submitted')).toBe(true);
    expect((await checkStore([dir])).findings.filter((f) => f.severity === 'error')).toEqual([]);
    const rerun = await recoverStore([dir], { apply: true, hooks: JOURNAL_ONLY_HOOKS });
    expect(rerun.turns.map((t) => t.outcome)).toEqual(Array(pending - closed).fill('recovered'));
    expect(Object.values(await states(dir))).toEqual(Array(pending).fill('interrupted'));
    expect(
      interruptedRecords(dir)
        .map((r) => r.turn_id)
        .sort(),
    ).toEqual(Array.from({ length: pending }, (_, i) => `t-${i}`).sort());
    expect((await checkStore([dir])).findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});

describe('recoverStore: event logs whose writer is gone (TJ-RECOV-011)', () => {
  it('closes every unfinished run with chat.cancelled, and leaves a log a live writer holds alone', async () => {
    const root = tempDir();
    const gone = await openEventLog({ root, sessionId: 'gone' });
    await gone.chatStarted({ requestId: 'r1' });
    await gone.delta({ requestId: 'r1', messageId: 'm1', text: 'half an ans' }).catch(() => undefined);
    await gone.close();
    const live = await openEventLog({ root, sessionId: 'live' });
    await live.chatStarted({ requestId: 'r2' });

    const plan = await recoverStore([root]);
    expect(plan.eventLogs).toEqual([{ file: join(root, 'gone/events.jsonl'), cancelled: [] }]);
    const applied = await recoverStore([root], { apply: true, hooks: JOURNAL_ONLY_HOOKS });
    expect(applied.eventLogs).toEqual([
      { file: join(root, 'gone/events.jsonl'), cancelled: [{ requestId: 'r1', seq: expect.any(Number) }] },
    ]);
    const last = JSON.parse(readFileSync(join(root, 'gone/events.jsonl'), 'utf8').trim().split('\n').at(-1) as string);
    expect(last).toMatchObject({
      type: 'chat.cancelled',
      payload: { request_id: 'r1', reason: 'server_startup_recovery' },
    });
    const check = await checkStore([join(root, 'gone')]);
    expect(check.eventLogs[0]?.activeRequestId).toBeNull();
    expect((await recoverStore([root])).eventLogs).toEqual([]);
    await live.close();
  });
});
