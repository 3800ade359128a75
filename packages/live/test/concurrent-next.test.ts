// A subscription's `next()` called again before the previous call settled — a server that races each `next()`
// against a heartbeat timer and calls it again on the beat — must still yield every record once, in order
// (TJ-LIVE-009). Before, two calls catching up from the store read the same batch and both yielded it.
import { openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { tempStore } from './support.js';

describe('next() called while the previous call is pending (TJ-LIVE-009)', () => {
  it('yields each record once and in order, from the store and live', async () => {
    const root = tempStore('tj-live-next-');
    // A window of 4 records: a subscriber from -1 catches up from the store.
    const hub = openConversationHub({ root, retention: false, ringRecords: 4 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    for (let i = 0; i < 40; i += 1) await sent.run.delta(`d${i}`);
    await session.flush();
    const head = session.durableSeq;
    const subscription = session.subscribe({ after: -1 });
    const seqs: number[] = [];
    const collect = (results: IteratorResult<unknown>[]) => {
      for (const result of results) {
        const value = result.value as { kind?: string; record?: { seq: number } } | undefined;
        if (result.done !== true && value?.kind === 'record' && value.record !== undefined) seqs.push(value.record.seq);
      }
    };
    // Two calls at a time through the records already written (head + 1 of them, an even split or one left over).
    while (seqs.length + 2 <= head + 1) collect(await Promise.all([subscription.next(), subscription.next()]));
    if (seqs.length < head + 1) collect([await subscription.next()]);
    expect(seqs).toEqual(Array.from({ length: head + 1 }, (_, i) => i));
    // Then live: three calls pending before the records they get exist.
    const pending = [subscription.next(), subscription.next(), subscription.next()];
    await sent.run.toolStart({ toolCallId: 'c1', tool: 'search' });
    await sent.run.done();
    collect(await Promise.all(pending));
    expect(seqs).toEqual(Array.from({ length: head + 4 }, (_, i) => i));
    // close() ends every call still waiting, not only the last one made.
    const waiting = [subscription.next(), subscription.next()];
    subscription.close();
    expect(await Promise.all(waiting)).toEqual([
      { done: true, value: undefined },
      { done: true, value: undefined },
    ]);
    await hub.close();
  });
});
