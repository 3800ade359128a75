// The additive places an integration (the AI SDK package) keeps its data in: extension records of a run, members of
// the user message, a message committed with the run's end, and what the session tells of a run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LiveError, openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { tempStore } from './support.js';

interface Line {
  seq: number;
  type: string;
  payload: { message?: unknown; error?: unknown; [key: string]: unknown };
}

function logLines(root: string, sessionId: string): Line[] {
  return readFileSync(join(root, sessionId, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);
}

describe('integration records of a live run', () => {
  it('an extension record between deltas keeps the segment open and lands in order, with the run id (TJ-LIVE-025)', async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('not created');
    await sent.run.delta('Hel');
    await sent.run.extension('x.acme.note', { note: { nested: [1, 'two'] } });
    await sent.run.delta('lo');
    await sent.run.done();
    await hub.close();
    const records = logLines(root, 's1').filter((r) => r.type !== 'checkpoint');
    expect(records.map((r) => r.type)).toEqual([
      'chat.started',
      'message_append',
      'assistant.segment.started',
      'chat.delta',
      'x.acme.note',
      'chat.delta',
      'message_append',
      'chat.done',
    ]);
    expect(records[4]?.payload).toEqual({ note: { nested: [1, 'two'] }, request_id: 'r1' });
    // One segment, one assistant message: the extension record did not close it.
    expect(records[6]?.payload.message).toMatchObject({ content: 'Hello' });
  });

  it('an extension record is refused for a type outside x.<org>.<name> and for a run that is not active', async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('not created');
    await expect(sent.run.extension('chat.delta', { text: 'x' })).rejects.toMatchObject({ code: 'invalid_request' });
    await sent.run.done();
    await expect(sent.run.extension('x.acme.note', {})).rejects.toMatchObject({ code: 'run_not_active' });
    await hub.close();
  });

  it("messageFields are members of the user message; the session's own members cannot be set", async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    await expect(
      session.send({ requestId: 'r0', content: 'hi', messageFields: { role: 'system' } }),
    ).rejects.toBeInstanceOf(LiveError);
    const sent = await session.send({ requestId: 'r1', content: 'hi', messageFields: { ui: { parts: [1] } } });
    if (!sent.created) throw new Error('not created');
    expect(session.snapshot().messages[0]).toEqual({
      ui: { parts: [1] },
      role: 'user',
      content: 'hi',
      id: 'r1.user',
      request_id: 'r1',
    });
    await sent.run.done();
    await hub.close();
  });

  it("a finishing call's message is committed after the partial segment and before the finishing record", async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('not created');
    await sent.run.delta('part');
    await expect(sent.run.error({ message: 'boom' }, { message: { content: 'no role' } })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await sent.run.error({ message: 'boom' }, { message: { role: 'ui_message', ui: { id: 'm1' } } });
    expect(session.runInfo('r1')).toMatchObject({ status: 'error', acked: false });
    await hub.close();
    const records = logLines(root, 's1').filter((r) => r.type !== 'checkpoint');
    expect(records.slice(-3).map((r) => [r.type, r.payload.message ?? r.payload.error])).toEqual([
      ['message_append', { role: 'assistant', content: 'part', id: 'r1.a1', request_id: 'r1', partial: true }],
      ['message_append', { role: 'ui_message', ui: { id: 'm1' }, request_id: 'r1' }],
      ['chat.error', { message: 'boom' }],
    ]);
  });

  it('runInfo gives the seqs of a run, also after a reopen, and undefined for an unknown run', async () => {
    const root = tempStore();
    let hub = openConversationHub({ root, retention: false });
    let session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('not created');
    expect(session.runInfo('r1')).toEqual({
      requestId: 'r1',
      status: 'running',
      startedSeq: 0,
      finishedSeq: null,
      acked: false,
    });
    await sent.run.done();
    await hub.close();
    hub = openConversationHub({ root, retention: false });
    session = await hub.session('s1');
    const finished = logLines(root, 's1').find((r) => r.type === 'chat.done')?.seq;
    expect(session.runInfo('r1')).toEqual({
      requestId: 'r1',
      status: 'done',
      startedSeq: 0,
      finishedSeq: finished,
      acked: false,
    });
    expect(session.runInfo('nope')).toBeUndefined();
    await hub.close();
  });
});
