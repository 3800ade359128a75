// The FanOut contract (packages/live/src/fanout.ts): `publish(S, N)` reaches every listener of session S registered
// before it and still registered, once, in registration order; never a listener of another session; `listen` returns
// a function that stops its listener, which later announcements skip; and the hub's sessions announce through it.
import { type FanOut, InProcessFanOut, openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { tempStore } from './support.js';

describe('InProcessFanOut', () => {
  it('calls each listener of the session once per announcement, in registration order, with the seq', () => {
    const fanOut: FanOut = new InProcessFanOut();
    const heard: string[] = [];
    fanOut.listen('s1', (seq) => heard.push(`a${seq}`));
    fanOut.listen('s1', (seq) => heard.push(`b${seq}`));
    fanOut.publish('s1', 3);
    fanOut.publish('s1', 4);
    expect(heard).toEqual(['a3', 'b3', 'a4', 'b4']);
  });

  it('keeps sessions apart, and publishing to a session nobody listens to is a no-op', () => {
    const fanOut = new InProcessFanOut();
    const heard: string[] = [];
    fanOut.listen('s1', (seq) => heard.push(`s1:${seq}`));
    fanOut.listen('s2', (seq) => heard.push(`s2:${seq}`));
    fanOut.publish('s2', 7);
    fanOut.publish('nobody', 1);
    expect(heard).toEqual(['s2:7']);
  });

  it('stops a listener its returned function removed, and leaves the others listening', () => {
    const fanOut = new InProcessFanOut();
    const heard: string[] = [];
    const stopA = fanOut.listen('s1', (seq) => heard.push(`a${seq}`));
    fanOut.listen('s1', (seq) => heard.push(`b${seq}`));
    fanOut.publish('s1', 1);
    stopA();
    stopA(); // a second stop changes nothing
    fanOut.publish('s1', 2);
    expect(heard).toEqual(['a1', 'b1', 'b2']);
  });

  it('counts the same function registered twice as one listener (a set), stopped by either stop', () => {
    const fanOut = new InProcessFanOut();
    const heard: number[] = [];
    const listener = (seq: number) => heard.push(seq);
    const stopFirst = fanOut.listen('s1', listener);
    fanOut.listen('s1', listener);
    fanOut.publish('s1', 1);
    stopFirst();
    fanOut.publish('s1', 2);
    expect(heard).toEqual([1]);
  });

  it('lets a listener stop itself or register another during an announcement without skipping or repeating one', () => {
    const fanOut = new InProcessFanOut();
    const heard: string[] = [];
    const stop = fanOut.listen('s1', (seq) => {
      heard.push(`once${seq}`);
      stop();
      fanOut.listen('s1', (later) => heard.push(`late${later}`));
    });
    fanOut.listen('s1', (seq) => heard.push(`b${seq}`));
    fanOut.publish('s1', 1);
    // The listener added during the announcement hears the next one only.
    fanOut.publish('s1', 2);
    expect(heard).toEqual(['once1', 'b1', 'b2', 'late2']);
  });

  it('listens again after the last listener of a session stopped', () => {
    const fanOut = new InProcessFanOut();
    const heard: number[] = [];
    fanOut.listen('s1', () => heard.push(-1))();
    fanOut.listen('s1', (seq) => heard.push(seq));
    fanOut.publish('s1', 5);
    expect(heard).toEqual([5]);
  });
});

describe('the hub announces durable seqs through its fan-out', () => {
  it('publishes each durable seq of a session to a custom FanOut, in ascending order', async () => {
    const published: [string, number][] = [];
    const fanOut: FanOut = {
      publish: (sessionId, seq) => published.push([sessionId, seq]),
      listen: () => () => undefined,
    };
    const hub = openConversationHub({ root: tempStore('tj-live-fanout-'), fanOut, retention: false });
    expect(hub.fanOut).toBe(fanOut);
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('hello');
    await sent.run.done();
    const seqs = published.filter(([id]) => id === 's1').map(([, seq]) => seq);
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs.at(-1)).toBe(session.durableSeq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    await hub.close();
  });

  it('uses an InProcessFanOut by default, whose listeners hear the session become durable', async () => {
    const hub = openConversationHub({ root: tempStore('tj-live-fanout-'), retention: false });
    expect(hub.fanOut).toBeInstanceOf(InProcessFanOut);
    const heard: number[] = [];
    const stop = hub.fanOut.listen('s1', (seq) => heard.push(seq));
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.done();
    stop();
    expect(heard.at(-1)).toBe(session.durableSeq);
    await hub.close();
  });
});
