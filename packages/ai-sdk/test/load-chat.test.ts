// loadChat for answers that have no UIMessage of their own: a run that restart recovery ended, before and after
// compaction removed its records.
import { loadChat, persistUIMessageStream } from '@turnjournal/ai-sdk';
import { openConversationHub } from '@turnjournal/live';
import type { UIMessageChunk } from 'ai';
import { convertArrayToReadableStream } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { json, tempStore } from './support.js';

const ui = (id: string, text: string) => ({ id, role: 'user', parts: [{ type: 'text', text }] });

describe('loadChat of an interrupted answer', () => {
  it('rebuilds it from its records, and from its committed text once compaction removed them', async () => {
    const root = tempStore();
    let hub = openConversationHub({ root, retention: false });
    let session = await hub.session('s');
    const sent = await session.send({ requestId: 'u1', content: 'hi', messageFields: { ui: ui('u1', 'hi') } });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.extension('x.turnjournal.ui_chunk', { chunk: { type: 'start', messageId: 'm1' } });
    await sent.run.extension('x.turnjournal.ui_chunk', { chunk: { type: 'reasoning-start', id: 'r' } });
    await sent.run.extension('x.turnjournal.ui_chunk', { chunk: { type: 'reasoning-delta', id: 'r', delta: 'hm' } });
    await sent.run.extension('x.turnjournal.ui_chunk', { chunk: { type: 'text-start', id: 't' } });
    await sent.run.delta('half an ');
    await sent.run.delta('answer');
    // The process ends with the run open; the next open recovers it (TJ-LIVE-016, TJ-LIVE-017).
    await hub.close();
    hub = openConversationHub({ root, retention: false });
    session = await hub.session('s');
    expect(session.runInfo('u1')?.status).toBe('cancelled');
    // Until a client received its end, the resume handler replays it: the first render leaves it out.
    expect((await loadChat(session)).map((m) => m.id)).toEqual(['u1']);
    const rebuilt = await loadChat(session, { forResume: false });
    expect(json(rebuilt[1])).toEqual({
      id: 'm1',
      role: 'assistant',
      parts: [
        { type: 'reasoning', id: 'r', text: 'hm', state: 'streaming' },
        { type: 'text', text: 'half an answer', state: 'streaming' },
      ],
    });
    await session.ack('u1', { clientId: 'tab', throughSeq: session.runInfo('u1')?.finishedSeq ?? -1 });
    expect(await loadChat(session)).toEqual(rebuilt);

    // Later answers, enough records for a checkpoint after the interrupted run; then compaction drops its records.
    for (let turn = 2; turn <= 4; turn += 1) {
      const next = await session.send({
        requestId: `u${turn}`,
        content: 'more',
        messageFields: { ui: ui(`u${turn}`, 'more') },
      });
      if (!next.created) throw new Error('expected a new run');
      const chunks: UIMessageChunk[] = [
        { type: 'start', messageId: `m${turn}` },
        { type: 'text-start', id: 't' },
        ...Array.from({ length: 40 }, (): UIMessageChunk => ({ type: 'text-delta', id: 't', delta: 'x'.repeat(64) })),
        { type: 'text-end', id: 't' },
        { type: 'finish' },
      ];
      await persistUIMessageStream(next.run, convertArrayToReadableStream(json(chunks)), { messageId: `m${turn}` });
      await session.ack(`u${turn}`, { clientId: 'tab' });
    }
    const compaction = await session.compact({ retentionSeconds: 0 });
    expect(compaction).toMatchObject({ compacted: true });
    const afterCompaction = await loadChat(session);
    // The reasoning lived only in the removed records; the text the transcript committed stands for the answer.
    expect(json(afterCompaction[1])).toEqual({
      id: 'u1.assistant',
      role: 'assistant',
      parts: [{ type: 'text', text: 'half an answer' }],
    });
    expect(afterCompaction.map((m) => m.id)).toEqual(['u1', 'u1.assistant', 'u2', 'm2', 'u3', 'm3', 'u4', 'm4']);
    await hub.close();
  });
});
