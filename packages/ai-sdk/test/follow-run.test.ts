// Reading a run back from the journal with followRun, outside the HTTP handlers.
import { followRun, persistUIMessageStream } from '@turnjournal/ai-sdk';
import { openConversationHub } from '@turnjournal/live';
import type { UIMessageChunk } from 'ai';
import { convertArrayToReadableStream } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { json, readAll, tempStore } from './support.js';

const CHUNKS: UIMessageChunk[] = [
  { type: 'start', messageId: 'm' },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'one ' },
  { type: 'text-delta', id: 't', delta: 'two' },
  { type: 'text-end', id: 't' },
  { type: 'finish' },
];

describe('followRun', () => {
  it('reads a finished run to its end, also when its finishing record adds no chunk, and reports the delivery', async () => {
    const hub = openConversationHub({ root: tempStore(), retention: false });
    const session = await hub.session('s');
    const sent = await session.send({ requestId: 'r', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await persistUIMessageStream(sent.run, convertArrayToReadableStream(json(CHUNKS)), { messageId: 'm' });
    const delivered: number[] = [];
    // Iterated directly: a pull that enqueues nothing is not called again for the waiting read.
    const chunks = await readAll(followRun(session, 'r', 0, { onDelivered: (seq) => delivered.push(seq) }));
    expect(chunks).toEqual(CHUNKS);
    expect(delivered).toEqual([session.runInfo('r')?.finishedSeq]);
    await hub.close();
  });
});
