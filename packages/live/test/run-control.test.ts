// Run control: a conflicting resend, cancel by id, a shutdown that ends runs as a shutdown (spec §18.1, §18.5).
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type LiveError, openConversationHub } from '@turnjournal/live';
import { checkStore, replayEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { tempStore } from './support.js';

async function finishing(root: string, sessionId: string): Promise<unknown[]> {
  const replay = await replayEventLog(join(root, sessionId, 'events.jsonl'));
  if (replay.kind !== 'records') throw new Error('expected records');
  return replay.records
    .map((r) => r.value as { type: string; payload: { reason?: string } })
    .filter((r) => r.type === 'chat.cancelled' || r.type === 'chat.done')
    .map((r) => [r.type, r.payload.reason]);
}

/** [turn id, terminal event, reason] of every turn's terminal event in the store's turn journals. */
function turnStates(root: string): unknown[] {
  const dir = join(root, '_turn_journal');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) => readFileSync(join(dir, name), 'utf8').trimEnd().split('\n'))
    .map((line) => JSON.parse(line) as { event: string; turn_id: string; reason?: string; terminal?: boolean })
    .filter((event) => event.terminal === true)
    .map((event) => [event.turn_id, event.event, event.reason ?? null]);
}

describe('a resend of a known request id (TJ-LIVE-034)', () => {
  it('is a retry with the same content and a conflict with other content, before and after a restart', async () => {
    const root = tempStore();
    let hub = openConversationHub({ root, retention: false });
    let session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'first message' });
    if (!sent.created) throw new Error('expected a new run');
    await expect(session.send({ requestId: 'r1', content: 'first message' })).resolves.toMatchObject({
      created: false,
      status: 'running',
    });
    await expect(session.send({ requestId: 'r1', content: 'another message' })).rejects.toMatchObject({
      code: 'request_id_conflict',
    } satisfies Partial<LiveError>);
    await sent.run.done();
    await hub.close();

    hub = openConversationHub({ root, retention: false });
    session = await hub.session('s1');
    await expect(session.send({ requestId: 'r1', content: 'another message' })).rejects.toMatchObject({
      code: 'request_id_conflict',
    });
    await expect(session.send({ requestId: 'r1', content: 'first message' })).resolves.toMatchObject({
      created: false,
      status: 'done',
    });
    // Nothing of the refused message was written: one user message.
    expect(
      session
        .snapshot()
        .messages.filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['first message']);
    await hub.close();
  });

  it('is decided by the event log once the turn journal no longer holds the turn', async () => {
    const root = tempStore();
    let hub = openConversationHub({ root, retention: false });
    let session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'first message' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.done();
    await hub.close();
    // A sweep removed the completed turn: only the event log remembers r1.
    for (const name of readdirSync(join(root, '_turn_journal'))) rmSync(join(root, '_turn_journal', name));
    hub = openConversationHub({ root, retention: false });
    session = await hub.session('s1');
    await expect(session.send({ requestId: 'r1', content: 'another message' })).rejects.toMatchObject({
      code: 'request_id_conflict',
    });
    await expect(session.send({ requestId: 'r1', content: 'first message' })).resolves.toMatchObject({
      created: false,
    });
    await hub.close();
  });
});

describe('cancel by request id (TJ-LIVE-035)', () => {
  it('ends the active run with its reason, aborts the worker signal, and refuses the worker afterwards', async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'q' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('half an ans');
    expect(sent.run.signal.aborted).toBe(false);
    await session.cancel('r1', 'user_stop');
    expect(sent.run.signal.aborted).toBe(true);
    expect(session.activeRequestId).toBeUndefined();
    expect(session.statusOf('r1')).toBe('cancelled');
    await expect(sent.run.delta('wer')).rejects.toMatchObject({ code: 'run_not_active' });
    const view = session.snapshot();
    expect(view.messages.map((m) => [m.role, m.content, (m as { partial?: boolean }).partial])).toEqual([
      ['user', 'q', undefined],
      ['assistant', 'half an ans', true],
    ]);
    await expect(session.cancel('r1')).rejects.toMatchObject({ code: 'run_not_active' });
    await expect(session.cancel('nope')).rejects.toMatchObject({ code: 'unknown_run' });
    // The session goes on: the next turn starts.
    await expect(session.send({ requestId: 'r2', content: 'again' })).resolves.toMatchObject({ created: true });
    await hub.close();
    expect(await finishing(root, 's1')).toEqual([
      ['chat.cancelled', 'user_stop'],
      ['chat.cancelled', 'server_shutdown'],
    ]);
    expect(turnStates(root)).toEqual([
      ['r1', 'interrupted', 'user_stop'],
      ['r2', 'interrupted', 'server_shutdown'],
    ]);
  });
});

describe('hub.close with an active run (TJ-LIVE-036)', () => {
  it('cancels it as a shutdown, not as a crash the next start recovers', async () => {
    const root = tempStore();
    let hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'q' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('partial');
    await hub.close({ runs: 'cancel' });
    expect(sent.run.signal.aborted).toBe(true);
    hub = openConversationHub({ root, retention: false });
    await hub.session('s1');
    await hub.close();
    expect(await finishing(root, 's1')).toEqual([['chat.cancelled', 'server_shutdown']]);
    expect(turnStates(root)).toEqual([['r1', 'interrupted', 'server_shutdown']]);
  });

  it('refuses an unknown runs option before closing anything', async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    await expect(hub.close({ runs: 'later' as 'wait' })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(session.closed).toBe(false);
    await hub.close();
    expect(session.closed).toBe(true);
  });

  it("with runs: 'wait' refuses new sends and closes once the worker ended its run", async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'q' });
    if (!sent.created) throw new Error('expected a new run');
    let closed = false;
    const closing = hub.close({ runs: 'wait' }).then(() => {
      closed = true;
    });
    await sent.run.delta('the whole ');
    await expect(session.send({ requestId: 'r2', content: 'more' })).rejects.toMatchObject({
      code: 'session_closed',
    });
    expect(closed).toBe(false);
    await sent.run.delta('answer');
    await sent.run.done();
    await closing;
    expect(sent.run.signal.aborted).toBe(false);
    expect(await finishing(root, 's1')).toEqual([['chat.done', undefined]]);
    expect(turnStates(root)).toEqual([['r1', 'completed', null]]);
  });
});

describe('session ids the store reserves (TJ-LIVE-037)', () => {
  it.each(['_turn_journal', '_TURN_journal', 'sessions', 'Sessions', '.hidden', '.turnjournal-sweep.lock'])(
    'refuses %s and opens nothing',
    async (sessionId) => {
      const root = tempStore();
      const hub = openConversationHub({ root, retention: false });
      await expect(hub.session(sessionId)).rejects.toMatchObject({ code: 'reserved_session_id' });
      expect(hub.openSessions()).toEqual([]);
      await hub.close();
    },
  );

  it('keeps events and _turn_journal_x apart from the store files: check finds a clean store', async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    for (const id of ['events', 'session', '_turn_journal_x']) {
      const session = await hub.session(id);
      const sent = await session.send({ requestId: `r-${id}`, content: id });
      if (!sent.created) throw new Error('expected a new run');
      await sent.run.done();
    }
    await hub.close();
    const check = await checkStore([root]);
    expect(check.findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});
