// Issue 34, finding 2: a disk that runs full under a live session. Before, the reopen that recovers the session wrote
// the run's partial message and, behind it, the checkpoint that had fallen due — the whole conversation again — so
// with 1 MiB freed every reopen failed with ENOSPC until there was room for that checkpoint; and the first failing
// call answered `append_cancelled … retry it` (or `writer_poisoned`, `write_failed`) while its retry only ever got
// `session_failed`. Recovery now writes only the small records it needs (TJ-LIVE-023), every call of a failed
// session answers the same `session_failed` saying what to do, and the same hub opens the session once there is room
// (TJ-LIVE-024).
import { SimulatedFileSystem } from '@turnjournal/conformance';
import { type HubSession, LiveError, openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { fullDisk } from './full-disk.js';

const DEAD = { statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)) };
const MiB = 1024 * 1024;
const LOG = '/s/s1/events.jsonl';

/** The log's lines (without its pre-allocated space). */
function lines(sim: SimulatedFileSystem): string[] {
  const text = Buffer.from(sim.peek(LOG) ?? new Uint8Array())
    .toString('utf8')
    .replace(/\0+$/, '');
  return text.split('\n').filter((line) => line !== '');
}

/** The length of the log's last checkpoint line, its seq, and the bytes of the lines after it. */
function sinceCheckpoint(sim: SimulatedFileSystem): { checkpoint: number; seq: number; since: number } {
  const all = lines(sim);
  let at = all.length - 1;
  while (at >= 0 && !(all[at] as string).includes('"type":"checkpoint"')) at -= 1;
  const line = all[at] as string;
  const since = all.slice(at + 1).reduce((sum, l) => sum + Buffer.byteLength(l) + 1, 0);
  return { checkpoint: Buffer.byteLength(line) + 1, seq: (JSON.parse(line) as { seq: number }).seq, since };
}

async function failure(call: Promise<unknown>): Promise<LiveError> {
  const outcome = await call.then(
    () => new Error('the call succeeded'),
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(LiveError);
  return outcome as LiveError;
}

/**
 * A session of 40 turns (a message list of 1.6 MB, whose checkpoint is over 1 MiB) streaming a run whose log has
 * almost reached its next checkpoint, on a disk that then runs full: returns the hub, the disk and the first failure.
 */
async function sessionOnAFullDisk() {
  const sim = new SimulatedFileSystem();
  const disk = fullDisk(sim.view(), '/s');
  const hub = openConversationHub({ root: '/s', fs: disk.fs, lock: DEAD, retention: false, deltaFlushMs: 60_000 });
  const session = await hub.session('s1');
  for (let i = 0; i < 40; i++) {
    const sent = await session.send({ requestId: `r${i}`, content: `${i} `.padEnd(40_000, 'x') });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('an answer');
    await sent.run.done();
  }
  const sent = await session.send({ requestId: 'live', content: 'go' });
  if (!sent.created) throw new Error('expected a new run');
  // A first segment, closed by a tool call: its deltas and its message bring the log close to its next checkpoint,
  // which the records recovery writes then bring due.
  let segment = 0;
  for (;;) {
    const { checkpoint, since } = sinceCheckpoint(sim);
    if (since + segment + 30_000 > checkpoint - 40_000) break;
    await sent.run.delta('y'.repeat(10_000));
    segment += 10_000;
    await session.flush();
  }
  await sent.run.toolStart({ toolCallId: 'c0', tool: 'search' });
  await sent.run.toolEnd({ toolCallId: 'c0' });
  const before = sinceCheckpoint(sim);
  expect(before.checkpoint).toBeGreaterThan(1.4 * MiB);
  await disk.leaveFree(0);
  let first: LiveError | undefined;
  let retry: () => Promise<unknown> = async () => undefined;
  for (let i = 0; first === undefined && i < 1000; i++) {
    const text = `more ${i} `.repeat(200);
    const delta = sent.run.delta(text);
    first = await delta.then(
      () => undefined,
      (error: unknown) => error as LiveError,
    );
    retry = () => sent.run.delta(text);
    if (first === undefined && i % 10 === 9) {
      first = await session.flush().then(
        () => undefined,
        (error: unknown) => error as LiveError,
      );
      retry = () => session.flush();
    }
  }
  if (first === undefined) throw new Error('the disk never ran full');
  expect(disk.refusals).toBeGreaterThan(0);
  return { sim, disk, hub, session, first, retry, checkpointBefore: before };
}

describe('a live session on a disk that ran full (issue 34, TJ-LIVE-023, TJ-LIVE-024)', () => {
  it('answers the first failing call with the session_failed a retry gets, saying to reopen through hub.session()', async () => {
    const { hub, session, first, retry } = await sessionOnAFullDisk();
    expect(first).toBeInstanceOf(LiveError);
    expect(first.code).toBe('session_failed');
    expect(first.message).toMatch(/ENOSPC/);
    expect(first.message).toMatch(/get it again from hub\.session\(\)/);
    const again = await failure(retry());
    expect({ code: again.code, message: again.message }).toEqual({ code: first.code, message: first.message });
    const other = await failure(session.send({ requestId: 'other', content: 'x' }));
    expect({ code: other.code, message: other.message }).toEqual({ code: first.code, message: first.message });
    await hub.close();
  }, 60_000);

  it('reopens with 1 MiB free although the checkpoint due is larger, writing no checkpoint', async () => {
    const { sim, disk, hub, checkpointBefore } = await sessionOnAFullDisk();
    await disk.leaveFree(MiB);
    const usedBefore = await disk.used();
    const reopened: HubSession = await hub.session('s1');
    expect(reopened.statusOf('live')).toBe('cancelled');
    const last = reopened.snapshot().messages.at(-1) as { role: string; partial?: boolean };
    expect(last).toMatchObject({ role: 'assistant', partial: true });
    // The last checkpoint is still the one before the disk ran full: recovery wrote none.
    expect(sinceCheckpoint(sim).seq).toBe(checkpointBefore.seq);
    expect((await disk.used()) - usedBefore).toBeLessThan(MiB);
    await hub.close();
  }, 60_000);

  it('the same hub opens the session once room is back, after an open refused for want of it', async () => {
    const { sim, disk, hub, checkpointBefore } = await sessionOnAFullDisk();
    // No room at all: the open fails, saying to call again once the cause is gone. The reopen first closes the failed
    // session's two journals, which gives their pre-allocated space back (at most 64 KiB each, TJ-DUR-034, TJ-DUR-035):
    // the disk is left short of that much, so that no byte is free even then.
    await disk.leaveFree(-2 * 64 * 1024);
    const refused = await failure(hub.session('s1'));
    expect(refused.code).toBe('session_failed');
    expect(refused.message).toMatch(/call hub\.session\(\) again/);
    const again = await failure(hub.session('s1'));
    expect(again.code).toBe('session_failed');
    disk.unlimited();
    const reopened = await hub.session('s1');
    expect(reopened.statusOf('live')).toBe('cancelled');
    const next = await reopened.send({ requestId: 'next', content: 'and now?' });
    if (!next.created) throw new Error('expected a new run');
    await next.run.delta('fine');
    await next.run.done();
    expect(reopened.statusOf('next')).toBe('done');
    // The checkpoint put off by recovery is written by the first append after it.
    expect(sinceCheckpoint(sim).seq).toBeGreaterThan(checkpointBefore.seq);
    await hub.close();
  }, 60_000);
});
