// The turn flow, subscribe, snapshot, acks and restart recovery of a live session on a real directory (spec §18).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SimulatedFileSystem, seededRandom } from '@turnjournal/conformance';
import { type LiveError, type LiveEvent, type LiveRecord, openConversationHub } from '@turnjournal/live';
import { checkStore, replayEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { TestClock, take, tempStore } from './support.js';

function store(): string {
  const dir = tempStore('tj-live-');
  return dir;
}

function records(events: readonly LiveEvent[]): LiveRecord[] {
  return events.flatMap((e) => (e.kind === 'record' ? [e.record] : []));
}

describe('live session turn flow', () => {
  it('commits segments and tool results as messages, and links turn and run by id (TJ-LIVE-001, TJ-LIVE-004)', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'fix the test' });
    expect(sent.created).toBe(true);
    if (!sent.created) throw new Error('unreachable');
    const run = sent.run;
    await run.delta('Let me ');
    await run.delta('look.');
    await run.toolStart({ toolCallId: 'c1', tool: 'shell', args: { cmd: 'pnpm test' } });
    await run.toolResult({ toolCallId: 'c1', output: '1 failed' });
    await run.toolEnd({ toolCallId: 'c1' });
    await run.delta('Fixed.');
    await run.done();

    const view = session.snapshot();
    expect(view.activeRun).toBeNull();
    expect(view.overlay).toBeNull();
    expect(view.messages.map((m) => [m.role, m.content, (m as { partial?: boolean }).partial])).toEqual([
      ['user', 'fix the test', undefined],
      ['assistant', 'Let me look.', undefined],
      ['tool', '1 failed', undefined],
      ['assistant', 'Fixed.', undefined],
    ]);
    expect(view.undelivered.map((r) => r.requestId)).toEqual(['r1']);
    await hub.close();

    // A reader derives the same transcript from the file, and the turn journal holds turn r1, completed.
    const replay = await replayEventLog(join(root, 's1', 'events.jsonl'));
    if (replay.kind !== 'records') throw new Error('expected records');
    expect(replay.findings).toEqual([]);
    const check = await checkStore([root]);
    expect(check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state]))).toEqual([['r1', 'completed']]);
    expect(check.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('answers a retried send with the existing run, across a restart (TJ-LIVE-002)', async () => {
    const root = store();
    let hub = openConversationHub({ root, retention: false });
    let session = await hub.session('s1');
    const first = await session.send({ requestId: 'r1', content: 'hi' });
    if (!first.created) throw new Error('expected a new run');
    const again = await session.send({ requestId: 'r1', content: 'hi' });
    expect(again).toEqual({ created: false, requestId: 'r1', status: 'running' });
    await first.run.done();
    await hub.close();
    hub = openConversationHub({ root, retention: false });
    session = await hub.session('s1');
    expect(await session.send({ requestId: 'r1', content: 'hi' })).toEqual({
      created: false,
      requestId: 'r1',
      status: 'done',
    });
    const busy = await session.send({ requestId: 'r2', content: 'next' });
    expect(busy.created).toBe(true);
    const refused = await session.send({ requestId: 'r3', content: 'too early' }).catch((e: unknown) => e);
    expect((refused as LiveError).code).toBe('run_active');
    await hub.close();
  });

  it('answers the same request sent twice at once as one run and a retry, never run_active (TJ-LIVE-002)', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const [first, second] = await Promise.all([
      session.send({ requestId: 'r1', content: 'hi' }),
      session.send({ requestId: 'r1', content: 'hi' }),
    ]);
    expect(first.created).toBe(true);
    expect(second).toEqual({ created: false, requestId: 'r1', status: 'running' });
    if (first.created) await first.run.done();
    const check = await checkStore([root]);
    expect(check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state]))).toEqual([['r1', 'completed']]);
    await hub.close();
  });

  it('cuts off a live subscriber that falls behind the window, with its cursor, and it resumes from the log (TJ-LIVE-011, TJ-LIVE-030)', async () => {
    const root = store();
    const clock = new TestClock('2026-06-19T00:00:00Z');
    const hub = openConversationHub({ root, retention: false, ringRecords: 8, subscriberLagMs: 1000, clock });
    const session = await hub.session('s1');
    const slow = session.subscribe({ after: -1 });
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    const [first] = records(await take(slow, 1));
    expect(first?.seq).toBe(0);
    // The subscriber reads nothing for longer than the lag limit while the run streams far past the window of 8
    // recent records.
    clock.pass(1001);
    for (let i = 0; i < 12; i++) await sent.run.toolResult({ toolCallId: `c${i}`, output: `result ${i}` });
    await sent.run.done();
    const next = await slow.next();
    expect(next.value).toEqual({ kind: 'cut_off', cursor: 0 });
    expect((await slow.next()).done).toBe(true);
    // Resuming from the cursor gives every later record once, in order, from the log.
    const head = session.snapshot().lastSeq ?? -1;
    const resumed = session.subscribe({ after: 0 });
    const rest = records(await take(resumed, head));
    expect(rest.map((r) => r.seq)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    resumed.close();
    await hub.close();
  });

  it('replays from any cursor (older than the window: from the log, TJ-LIVE-012) then streams live, without gap or duplicate (TJ-LIVE-009)', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false, ringRecords: 4 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'count' });
    if (!sent.created) throw new Error('expected a new run');
    for (let i = 0; i < 20; i += 1) await sent.run.delta(`${i} `);
    await session.flush();
    const head = session.durableSeq;
    // Cursor 3 is older than the 4-record window: served from disk, then the window, then live.
    const late = session.subscribe({ after: 3 });
    const live = session.subscribe({ after: head });
    const replayed = records(await take(late, head - 3));
    expect(replayed.map((r) => r.seq)).toEqual(Array.from({ length: head - 3 }, (_, i) => i + 4));
    const finishing = sent.run.done();
    const tailLate = records(await take(late, 2));
    const tailLive = records(await take(live, 2));
    await finishing;
    expect(tailLate.map((r) => r.type)).toEqual(['message_append', 'chat.done']);
    expect(tailLive).toEqual(tailLate);
    late.close();
    live.close();
    await hub.close();
  });

  it('answers a cursor ahead of the log with a snapshot (TJ-LIVE-010)', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const [event] = await take(session.subscribe({ after: 99 }), 1);
    expect(event?.kind).toBe('snapshot');
    if (event?.kind === 'snapshot') expect(event.reason).toBe('ahead');
    await hub.close();
  });

  it('refuses an ack below the finishing record and lists runs per client (TJ-LIVE-014)', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('hello');
    await sent.run.done();
    const [missed] = session.snapshot({ clientId: 'tab-1' }).undelivered;
    expect(missed?.requestId).toBe('r1');
    const early = await session
      .ack('r1', { clientId: 'tab-1', throughSeq: (missed?.finishedSeq ?? 0) - 1 })
      .catch((e: unknown) => e);
    expect((early as LiveError).code).toBe('ack_before_finish');
    await session.ack('r1', { clientId: 'tab-1', throughSeq: missed?.finishedSeq ?? 0 });
    expect(session.snapshot({ clientId: 'tab-1' }).undelivered).toEqual([]);
    expect(session.snapshot({ clientId: 'tab-2' }).undelivered.map((r) => r.requestId)).toEqual(['r1']);
    await hub.close();
  });

  it('after a crash keeps the open segment as a partial message and closes run and turn (TJ-LIVE-016, TJ-LIVE-017)', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'write a poem' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('Roses are ');
    await sent.run.delta('red');
    await session.flush();
    // The process dies: nothing is closed. A new hub takes the stale locks over (the holder is this process, so tell
    // the lock layer it is gone).
    const restarted = openConversationHub({ root, retention: false, lock: { statusOf: () => 'stale' } });
    const recovered = await restarted.session('s1');
    const view = recovered.snapshot();
    expect(view.activeRun).toBeNull();
    expect(view.messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'Roses are red',
      id: 'r1.a1',
      request_id: 'r1',
      partial: true,
    });
    expect(view.undelivered).toEqual([expect.objectContaining({ requestId: 'r1', status: 'cancelled' })]);
    const log = readFileSync(join(root, 's1', 'events.jsonl'), 'utf8');
    expect(log).toContain('"reason":"server_startup_recovery"');
    await restarted.close();
    const check = await checkStore([root]);
    expect(check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state]))).toEqual([['r1', 'interrupted']]);
  });
});

describe('live session durability and views', () => {
  const dead = {
    statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)),
  };

  it('makes submitted, chat.started, the user message, tool records and the finishing record durable before resolving (TJ-LIVE-003, TJ-LIVE-005, TJ-LIVE-006)', async () => {
    for (const crashAfter of ['send', 'tool', 'done'] as const) {
      const fs = new SimulatedFileSystem();
      const hub = openConversationHub({ root: '/s', fs, lock: dead, retention: false, deltaFlushMs: 60_000 });
      const session = await hub.session('s1');
      const sent = await session.send({ requestId: 'r1', content: 'hi' });
      if (!sent.created) throw new Error('expected a new run');
      if (crashAfter !== 'send') await sent.run.toolResult({ toolCallId: 'c1', output: 'out' });
      if (crashAfter === 'done') await sent.run.done();
      // Power loss: everything unsynced may go (the simulator decides), nothing synced may.
      fs.crash(seededRandom(7));
      const text = new TextDecoder().decode(await fs.readFile('/s/s1/events.jsonl'));
      const types = text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => (JSON.parse(l) as { type: string }).type);
      expect(types.slice(0, 2)).toEqual(['chat.started', 'message_append']);
      if (crashAfter !== 'send') expect(types).toContain('tool.result');
      if (crashAfter === 'done') expect(types.at(-1)).toBe('chat.done');
      const turns = new TextDecoder().decode(await fs.readFile('/s/_turn_journal/s1.jsonl'));
      expect(turns).toContain('"event":"submitted"');
      expect(turns).toContain('"turn_id":"r1"');
      if (crashAfter === 'done') expect(turns).toContain('"event":"completed"');
    }
  });

  it('does not sync or deliver a delta on its own, only with the next boundary (TJ-LIVE-007, TJ-LIVE-008)', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false, deltaFlushMs: 60_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    const head = session.durableSeq;
    await sent.run.delta('a');
    await sent.run.delta('b');
    expect(session.durableSeq).toBe(head);
    expect(session.snapshot().overlay).toBeNull();
    await sent.run.toolStart({ toolCallId: 'c1', tool: 'shell' });
    // segment.started, two deltas, the committed segment, tool.start.
    expect(session.durableSeq).toBe(head + 5);
    await hub.close();
  });

  it('gives a snapshot consistent with its lastSeq: subscribing after it repeats and misses nothing (TJ-LIVE-013)', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false, deltaFlushMs: 60_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('one ');
    await session.flush();
    await sent.run.delta('two');
    const view = session.snapshot();
    expect(view.overlay?.text).toBe('one ');
    expect(view.activeRun?.requestId).toBe('r1');
    const subscription = session.subscribe({ after: view.lastSeq ?? -1 });
    const flushing = session.flush();
    const [next] = records(await take(subscription, 1));
    await flushing;
    expect(next?.seq).toBe((view.lastSeq ?? -1) + 1);
    expect(next?.payload?.text).toBe('two');
    subscription.close();
    await hub.close();
  });

  it('expires the delivery of a finished run after the delivery window (TJ-LIVE-015)', async () => {
    const root = store();
    const clock = new TestClock('2026-06-19T00:00:00Z');
    const hub = openConversationHub({ root, retention: false, clock, deliveryWindowMs: 48 * 3_600_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.done();
    clock.pass(47 * 3_600_000);
    expect(session.snapshot().undelivered.map((r) => r.requestId)).toEqual(['r1']);
    clock.pass(2 * 3_600_000);
    expect(session.snapshot().undelivered).toEqual([]);
    await hub.close();
  });
});
