// session.listen (packages/live/src/fanout-listener.ts, issue 39): the events of `subscribe`, in the same order, each
// once, through a catch-up from the store and the live stream after it; the records of one commit in one call; `done`
// fulfils on close and rejects with what ended the stream (a listener that threw), the subscription then detached.
import { type LiveEvent, openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { take, tempStore } from './support.js';

const seqsOf = (events: readonly LiveEvent[]) =>
  events.map((event) => (event.kind === 'record' ? event.record.seq : `${event.kind}`));

describe('session.listen', () => {
  it('delivers what subscribe yields, in order and once, a commit at a time, from the store and then live', async () => {
    // A window of 8 records: most of what the first commits wrote is read back from the log.
    const hub = openConversationHub({ root: tempStore(), retention: false, ringRecords: 8 });
    try {
      const session = await hub.session('s1');
      const sent = await session.send({ requestId: 'r1', content: 'hi' });
      if (!sent.created) throw new Error('expected a new run');
      for (let d = 0; d < 60; d += 1) await sent.run.delta(`early ${d} `);
      await session.flush();

      const calls: LiveEvent[][] = [];
      let reached: () => void = () => undefined;
      let target = Number.POSITIVE_INFINITY;
      const listening = session.listen({ after: -1 }, (events) => {
        calls.push([...events]);
        if (listening.cursor >= target) reached();
      });
      const caughtUp = () =>
        new Promise<void>((resolve) => {
          reached = resolve;
          target = session.durableSeq;
          if (listening.cursor >= target) resolve();
        });
      await caughtUp();
      const callsForCatchUp = calls.length;
      for (let d = 0; d < 60; d += 1) await sent.run.delta(`live ${d} `);
      await session.flush();
      await caughtUp();

      const expected = await take(session.subscribe({ after: -1 }), session.durableSeq + 1);
      const delivered = calls.flat();
      expect(seqsOf(delivered)).toEqual(seqsOf(expected));
      expect(delivered).toEqual(expected);
      // Batches, not a call per record: the catch-up read from the store and the live commit.
      expect(callsForCatchUp).toBeLessThan(8);
      expect(calls.length - callsForCatchUp).toBeLessThan(8);
      expect(delivered.length).toBeGreaterThan(120);

      listening.close();
      await expect(listening.done).resolves.toBeUndefined();
      await sent.run.delta('after close');
      await session.flush();
      expect(calls.flat()).toHaveLength(delivered.length);
      await sent.run.done();
    } finally {
      await hub.close();
    }
  });

  it('gives listeners at different cursors each their own records from the window', async () => {
    const hub = openConversationHub({ root: tempStore(), retention: false });
    try {
      const session = await hub.session('s1');
      const sent = await session.send({ requestId: 'r1', content: 'hi' });
      if (!sent.created) throw new Error('expected a new run');
      for (let d = 0; d < 20; d += 1) await sent.run.delta(`d${d} `);
      await session.flush();
      const head = session.durableSeq;
      const heard = async (after: number, through: number) => {
        const seqs: (number | string)[] = [];
        await new Promise<void>((resolve) => {
          const listening = session.listen({ after }, (events) => {
            seqs.push(...seqsOf(events));
            if (listening.cursor >= through) {
              listening.close();
              resolve();
            }
          });
        });
        return seqs;
      };
      const range = (from: number, through: number) => Array.from({ length: through - from + 1 }, (_, i) => from + i);
      expect(await heard(head - 15, head)).toEqual(range(head - 14, head));
      // As many records as the first was given, from a later cursor; then from another cursor, then the first's again.
      for (let d = 0; d < 5; d += 1) await sent.run.delta(`e${d} `);
      await session.flush();
      const later = session.durableSeq;
      expect(later - (head - 10)).toBe(15);
      expect(await heard(head - 10, later)).toEqual(range(head - 9, later));
      expect(await heard(head - 12, later)).toEqual(range(head - 11, later));
      expect(await heard(head - 15, later)).toEqual(range(head - 14, later));
      await sent.run.done();
    } finally {
      await hub.close();
    }
  });

  it('rejects done with the error a listener threw, and detaches its subscription', async () => {
    const hub = openConversationHub({ root: tempStore(), retention: false });
    try {
      const session = await hub.session('s1');
      const failure = new Error('listener failed');
      const listening = session.listen({ after: -1 }, () => {
        throw failure;
      });
      // Observed before the first record can reach the listener, as a caller must.
      const ended = expect(listening.done).rejects.toBe(failure);
      expect(session.subscriberCount).toBe(1);
      const sent = await session.send({ requestId: 'r1', content: 'hi' });
      await ended;
      expect(session.subscriberCount).toBe(0);
      if (sent.created) await sent.run.done();
    } finally {
      await hub.close();
    }
  });

  it('fulfils done when the session closes', async () => {
    const hub = openConversationHub({ root: tempStore(), retention: false });
    const session = await hub.session('s1');
    const listening = session.listen({}, () => undefined);
    await hub.close();
    await expect(listening.done).resolves.toBeUndefined();
  });
});
