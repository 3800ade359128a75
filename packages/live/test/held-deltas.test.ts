// Deltas are held in memory and reach the OS with the next sync (spec §18.2, TJ-LIVE-007): `run.delta()` resolves
// once the delta is accepted, a burst of deltas costs one write, and a crash of the process loses only the deltas
// held since the last sync — never a record that was durable. Writes are counted through the file-system layer.
import { SimulatedFileSystem } from '@turnjournal/conformance';
import { openConversationHub } from '@turnjournal/live';
import type { FileSystem } from '@turnjournal/writer/file-system';
import { describe, expect, it } from 'vitest';
import { countLogCalls } from './support.js';

const DEAD = { statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)) };
const LOG = '/s/s1/events.jsonl';

/** `base` with its writes and syncs (fsync or fdatasync) of the event log counted. */
function counting(base: FileSystem): { fs: FileSystem; writes: () => number; syncs: () => number } {
  const { fs, calls } = countLogCalls(base, LOG);
  return { fs, writes: () => calls.writes, syncs: () => calls.fsyncs + calls.fdatasyncs };
}

function logTypes(fs: SimulatedFileSystem): { type: string; payload: Record<string, unknown> }[] {
  const text = new TextDecoder().decode(fs.peek(LOG));
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
}

describe('held deltas (TJ-LIVE-007)', () => {
  it('writes nothing for awaited deltas, then one write and one sync at the next boundary', async () => {
    const sim = new SimulatedFileSystem();
    const counted = counting(sim.view());
    const hub = openConversationHub({ root: '/s', fs: counted.fs, lock: DEAD, retention: false, deltaFlushMs: 60_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    const writes = counted.writes();
    const syncs = counted.syncs();
    for (let n = 0; n < 300; n += 1) await sent.run.delta(`token ${n} `);
    // Every delta accepted, none handed to the OS yet: they reach it with the sync that makes them durable.
    expect(counted.writes()).toBe(writes);
    expect(logTypes(sim).filter((r) => r.type === 'chat.delta')).toEqual([]);
    await sent.run.toolStart({ toolCallId: 'c1', tool: 'search' });
    expect(counted.writes()).toBe(writes + 1);
    expect(counted.syncs()).toBe(syncs + 1);
    const records = logTypes(sim);
    expect(records.filter((r) => r.type === 'chat.delta').length).toBe(300);
    expect(records.at(-1)?.type).toBe('tool.start');

    // A longer burst is written each time the held bytes pass 64 KiB, not per delta and not all at the end.
    const before = counted.writes();
    await sent.run.delta('x');
    for (let n = 0; n < 3000; n += 1) await sent.run.delta(`token ${n} `);
    expect(counted.writes() - before).toBeGreaterThanOrEqual(3);
    expect(counted.writes() - before).toBeLessThan(30);
    await sent.run.done();
    expect(logTypes(sim).filter((r) => r.type === 'chat.delta').length).toBe(3301);
    await hub.close();
  });

  it('loses only the deltas held since the last sync when the process dies (SIGKILL)', async () => {
    const sim = new SimulatedFileSystem();
    const hub = openConversationHub({ root: '/s', fs: sim.view(), lock: DEAD, retention: false, deltaFlushMs: 60_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'look it up' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('Let me ');
    await sent.run.delta('look.');
    await sent.run.toolStart({ toolCallId: 'c1', tool: 'search' });
    await sent.run.toolResult({ toolCallId: 'c1', output: 'found' });
    await sent.run.delta('Found ');
    await sent.run.delta('it.');
    const durable = session.durableSeq;
    // The process dies: what it wrote stays with the OS (nothing is lost to power), what it held is gone.
    sim.kill();
    await hub.close().catch(() => undefined);

    const reopened = openConversationHub({ root: '/s', fs: sim.view(), lock: DEAD, retention: false });
    const restarted = await reopened.session('s1');
    const records = logTypes(sim);
    // Every record up to the last sync is there; the held segment start and deltas are not; recovery cancels the run.
    expect(records.slice(0, durable + 1).map((r) => r.type)).toEqual([
      'chat.started',
      'message_append',
      'assistant.segment.started',
      'chat.delta',
      'chat.delta',
      'message_append',
      'tool.start',
      'tool.result',
      'message_append',
    ]);
    expect(records.slice(durable + 1).map((r) => r.type)).toEqual(['chat.cancelled']);
    const view = restarted.snapshot();
    expect(view.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'look it up'],
      ['assistant', 'Let me look.'],
      ['tool', 'found'],
    ]);
    expect(restarted.statusOf('r1')).toBe('cancelled');
    await reopened.close();
  });

  it('fails the session when the write of held deltas fails; a reopen recovers from what the file holds', async () => {
    const sim = new SimulatedFileSystem();
    const hub = openConversationHub({ root: '/s', fs: sim, lock: DEAD, retention: false, deltaFlushMs: 60_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('a');
    await sent.run.delta('b');
    sim.inject({ op: 'write', path: 'events.jsonl', errno: 'ENOSPC' });
    // The failing call and every later one answer the same `session_failed`, whose cause is the failed write
    // (TJ-LIVE-024).
    const failed = { code: 'session_failed', cause: { code: 'write_failed' } };
    await expect(sent.run.toolStart({ toolCallId: 'c1', tool: 'search' })).rejects.toMatchObject(failed);
    await expect(sent.run.delta('c')).rejects.toMatchObject(failed);
    await expect(session.flush()).rejects.toMatchObject(failed);
    await hub.close();

    const reopened = openConversationHub({ root: '/s', fs: sim, lock: DEAD, retention: false });
    const restarted = await reopened.session('s1');
    expect(logTypes(sim).map((r) => r.type)).toEqual(['chat.started', 'message_append', 'chat.cancelled']);
    expect(restarted.statusOf('r1')).toBe('cancelled');
    await reopened.close();
  });
});
