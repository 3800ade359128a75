// A checkpoint repeats the session's whole message list (TJ-EVENT-007), so in a long conversation one commit that
// carries a checkpoint has lines longer than the window's byte bound for subscribers. The window counted every record
// at its line's length, and such a commit evicted the records before its checkpoint that a subscriber reading promptly
// had not taken yet: it was cut off (a 100 MB answer with the 64 MiB default: after 14.5 M of its 20 M deltas). The
// checkpoint's messages are the session's own objects, so the window now counts what the checkpoint adds (TJ-LIVE-067);
// a subscriber that stopped reading is still cut off by the byte bound (TJ-LIVE-030).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type HubSession, type LiveRun, openConversationHub, type Subscription } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { take, tempStore } from './support.js';

/** The type and byte length (LF included) of every line of the event log at `file`. */
function logLineSizes(file: string): { type: string; bytes: number }[] {
  return readFileSync(file, 'utf8')
    .replace(/\0+$/, '')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ({
      type: /^\{"seq":\d+,"ts":"[^"]*","type":"([^"]+)"/.exec(line)?.[1] ?? '?',
      bytes: Buffer.byteLength(line) + 1,
    }));
}

/**
 * Every event `subscription` yields, read as each comes (as a transport does), as seqs or event kinds, until it ends or
 * yields anything but a record; `stop()` ends it once the reader has taken the seq `through` (or at once if it has).
 */
function readAsItComes(subscription: Subscription) {
  const received: (number | string)[] = [];
  const reading = (async () => {
    for await (const event of subscription) {
      received.push(event.kind === 'record' ? event.record.seq : event.kind);
      if (event.kind !== 'record') return;
    }
  })();
  return {
    received,
    /** Waits (a bounded number of turns of the event loop) until the reader took `through` or stopped, then ends it. */
    async stop(through: number): Promise<void> {
      for (let turn = 0; turn < 1000 && received.at(-1) !== through && typeof received.at(-1) !== 'string'; turn += 1)
        await new Promise<void>((resolve) => setImmediate(resolve));
      subscription.close();
      await reading;
    },
  };
}

/** A session streaming run r1 with a subscriber that reads every event as it comes and one that stopped reading. */
async function sessionWithReaderAndPaused(options: { ringBytes: number; subscriberLagBytes: number }) {
  const root = tempStore('tj-live-checkpoint-window-');
  const hub = openConversationHub({ root, retention: false, checkpointInterval: 2, ...options });
  const session: HubSession = await hub.session('s1');
  const sent = await session.send({ requestId: 'r1', content: 'read the logs' });
  if (!sent.created) throw new Error('expected a new run');
  const head = session.durableSeq;
  const paused = session.subscribe({ after: head - 1 });
  // It takes one record from the window: it streams live, and the window keeps what it has not received.
  expect((await take(paused, 1)).map((e) => (e.kind === 'record' ? e.record.seq : e.kind))).toEqual([head]);
  const reader = readAsItComes(session.subscribe({ after: head }));
  return { hub, session, run: sent.run as LiveRun, head, paused, reader, log: join(root, 's1', 'events.jsonl') };
}

/** Checks both halves of TJ-LIVE-030 once `results` tool results of `resultBytes` each went through the session. */
async function expectReaderKeptAndPausedCut(
  context: Awaited<ReturnType<typeof sessionWithReaderAndPaused>>,
  lagBytes: number,
): Promise<void> {
  const { hub, session, run, head, paused, reader } = context;
  await run.done();
  const last = session.durableSeq;
  await reader.stop(last);
  // The reader got every record in order, none twice, and was never cut off.
  expect(reader.received).toEqual(Array.from({ length: last - head }, (_, i) => head + 1 + i));
  // The one that stopped reading needed more than the byte bound: cut off with its cursor, and the window is within it.
  expect(session.windowUsage.bytes).toBeLessThanOrEqual(lagBytes);
  expect(await paused.next()).toEqual({ done: false, value: { kind: 'cut_off', cursor: head } });
  expect((await paused.next()).done).toBe(true);
  await hub.close();
}

describe('checkpoints larger than the byte bound for subscribers (TJ-LIVE-030, TJ-LIVE-067)', () => {
  it('cut off no subscriber that reads as records come, and still cut off one that stopped', async () => {
    const lagBytes = 256 * 1024;
    const context = await sessionWithReaderAndPaused({ ringBytes: 16 * 1024, subscriberLagBytes: lagBytes });
    // 16 results of 40 KiB: the list reaches 640 KiB, and the checkpoints falling due behind them (about doubling,
    // TJ-EVENT-006) pass the bound in the commit of the result they follow.
    for (let n = 0; n < 16; n += 1)
      await context.run.toolResult({ toolCallId: `c${n}`, output: `${n} ${'x'.repeat(40 * 1024)}` });
    const checkpoints = logLineSizes(context.log).filter((line) => line.type === 'checkpoint');
    expect(Math.max(...checkpoints.map((line) => line.bytes))).toBeGreaterThan(lagBytes);
    await expectReaderKeptAndPausedCut(context, lagBytes);
  });

  it('counts a split checkpoint’s parts by what they add too (TJ-EVENT-028)', async () => {
    const lagBytes = 24 * 1024 * 1024;
    const context = await sessionWithReaderAndPaused({ ringBytes: 1024 * 1024, subscriberLagBytes: lagBytes });
    // 6 results of 4.5 MiB, each a `tool.result` and the tool message's `message_append` in one commit: checkpoints of
    // 4.5, 9 and 13.5 MiB of messages fall due in the commits of the first, second and fourth (TJ-EVENT-006), each
    // commit within the bound, and one of 22.5 MiB in the sixth's: past the 16 MiB line limit, it is split, and that
    // commit (the result, the parts, the message) is past the bound.
    for (let n = 0; n < 6; n += 1)
      await context.run.toolResult({ toolCallId: `c${n}`, output: `${n} ${'y'.repeat(4.5 * 1024 * 1024)}` });
    const lines = logLineSizes(context.log);
    const lastResult = lines.map((line) => line.type).lastIndexOf('tool.result');
    const commit = lines.slice(lastResult);
    expect(commit.filter((line) => line.type === 'checkpoint.part').length).toBeGreaterThan(1);
    expect(lines.slice(0, lastResult).some((line) => line.type === 'checkpoint.part')).toBe(false);
    expect(commit.reduce((sum, line) => sum + line.bytes, 0)).toBeGreaterThan(lagBytes);
    await expectReaderKeptAndPausedCut(context, lagBytes);
  });
});
