// What one committed message costs the event log (spec §18.2, TJ-LIVE-006): a tool result is a `tool.result` and
// its `message_append`, made durable together before `toolResult()` resolves. Counted through the file-system layer:
// one write of both lines and one fdatasync, and the write lands in the log's pre-allocated space (spec §11.6), so
// the sync commits no new file size — the cost the durable-append floor of the benchmarks does not get.
import { SimulatedFileSystem } from '@turnjournal/conformance';
import { openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { countLogCalls, take } from './support.js';

const DEAD = { statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)) };
const LOG = '/s/s1/events.jsonl';

describe('a committed message (TJ-LIVE-006)', () => {
  it('costs one write into pre-allocated space and one fdatasync of the event log', async () => {
    const sim = new SimulatedFileSystem();
    const counted = countLogCalls(sim.view(), LOG);
    const hub = openConversationHub({ root: '/s', fs: counted.fs, lock: DEAD, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    // Past the log's first 64 KiB, where its space is at its full size and extended ahead of the lines.
    for (let n = 0; n < 100; n += 1) await sent.run.toolResult({ toolCallId: `w${n}`, output: 'y'.repeat(600) });
    const before = { ...counted.calls, grown: counted.calls.grown.length };
    const messages = 100;
    for (let n = 0; n < messages; n += 1)
      await sent.run.toolResult({ toolCallId: `c${n}`, output: `result ${n}: ${'y'.repeat(200)}` });
    const writes = counted.calls.writes - before.writes;
    const fdatasyncs = counted.calls.fdatasyncs - before.fdatasyncs;
    // A checkpoint (every 50 records by default) goes out with the message that brings it due, in the same write.
    expect(writes).toBe(messages);
    // One sync per message, and one per extension of the space, made ahead of the lines and off their path.
    const spaceWrites = counted.calls.spaceWrites - before.spaceWrites;
    expect(spaceWrites).toBeGreaterThan(0);
    expect(fdatasyncs).toBe(messages + spaceWrites);
    expect(counted.calls.fsyncs - before.fsyncs, 'the data and size, not the modification time').toBe(0);
    // The space grows with the file (about as much as it holds, at most 64 KiB), ahead of the lines: every message
    // overwrites space the file already has, and pays for no new length with its sync, but one that brings a checkpoint
    // of the whole conversation larger than the space left.
    const grown = counted.calls.grown.slice(before.grown);
    expect(grown.every((text) => text.includes('"type":"checkpoint"'))).toBe(true);
    expect(grown.length).toBeLessThanOrEqual(2);
    await sent.run.done();
    await hub.close();
    // Closed, the file holds only lines (TJ-DUR-034).
    expect(sim.peek(LOG)?.at(-1)).toBe(0x0a);
  });

  it('whose write fails is answered with the failure, reaches no subscriber, and is not in the log (TJ-LIVE-008, TJ-LIVE-024)', async () => {
    const sim = new SimulatedFileSystem();
    const hub = openConversationHub({ root: '/s', fs: sim, lock: DEAD, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.toolResult({ toolCallId: 'c0', output: 'kept' });
    const durable = session.durableSeq;
    const subscription = session.subscribe({ after: durable });
    // A write that fails without held lines before it: the file is truncated back and the writer re-reads its state,
    // the failed records never written; the sync after them must not make the session deliver them.
    sim.inject({ op: 'write', path: 'events.jsonl', errno: 'EIO' });
    await expect(sent.run.toolResult({ toolCallId: 'c1', output: 'lost' })).rejects.toMatchObject({
      code: 'session_failed',
      cause: { code: 'write_failed' },
    });
    expect(session.durableSeq).toBe(durable);
    expect(await take(subscription, 1)).toEqual([]);
    await hub.close();
    const reopened = openConversationHub({ root: '/s', fs: sim, lock: DEAD, retention: false });
    const restarted = await reopened.session('s1');
    const results = restarted.snapshot().messages.filter((message) => message.role === 'tool');
    expect(results.map((message) => message.content)).toEqual(['kept']);
    await reopened.close();
  });
});
