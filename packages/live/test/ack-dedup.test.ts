// Acknowledgements that add nothing write nothing (TJ-LIVE-056), and the client id an ack records is bounded
// (TJ-LIVE-057): issue 38 found 2,000 acks making 2,040 records, and 20 acks with a 900 KB client id 18 MB of log.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { openConversationHub } from '@turnjournal/live';
import { afterEach, describe, expect, it } from 'vitest';
import { tempStore } from './support.js';

const hubs: ReturnType<typeof openConversationHub>[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

/** A session with the finished runs `r1` and `r2`. */
async function finishedSession() {
  const root = tempStore();
  const hub = openConversationHub({ root, retention: false });
  hubs.push(hub);
  const session = await hub.session('chat');
  for (const requestId of ['r1', 'r2']) {
    const sent = await session.send({ requestId, content: requestId });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.done();
  }
  const logBytes = (): number => statSync(join(root, 'chat', 'events.jsonl')).size;
  return { session, logBytes };
}

describe('acknowledgements (TJ-LIVE-056)', () => {
  it('writes one record for 2,000 acks of a run by one client, sequential or concurrent', async () => {
    const { session } = await finishedSession();
    const before = session.durableSeq;
    for (let i = 0; i < 1000; i += 1) await session.ack('r1', { clientId: 'tab-1' });
    await Promise.all(Array.from({ length: 1000 }, () => session.ack('r2', { clientId: 'tab-1' })));
    expect(session.durableSeq - before).toBe(2);
    expect(session.runInfo('r1')?.acked).toBe(true);
    expect(session.snapshot({ clientId: 'tab-1' }).undelivered).toEqual([]);
  });

  it('writes a record per client, and none for an anonymous ack of a run a client acknowledged', async () => {
    const { session } = await finishedSession();
    const before = session.durableSeq;
    await session.ack('r1', { clientId: 'tab-1' });
    await session.ack('r1', { clientId: 'tab-2' });
    await session.ack('r1');
    await session.ack('r1', { clientId: 'tab-2' });
    expect(session.durableSeq - before).toBe(2);
    // An anonymous ack of a run no client acknowledged is a receipt like any other, written once.
    await session.ack('r2');
    await session.ack('r2');
    expect(session.durableSeq - before).toBe(3);
    expect(session.snapshot({ clientId: 'tab-3' }).undelivered.map((r) => r.requestId)).toEqual(['r1', 'r2']);
  });

  it('still refuses a repeated ack that is out of bounds (TJ-LIVE-014)', async () => {
    const { session } = await finishedSession();
    await session.ack('r1', { clientId: 'tab-1' });
    await expect(session.ack('r1', { clientId: 'tab-1', throughSeq: 1e9 })).rejects.toMatchObject({
      code: 'ack_beyond_log',
    });
    await expect(session.ack('r1', { clientId: 'tab-1', throughSeq: 0 })).rejects.toMatchObject({
      code: 'ack_before_finish',
    });
  });
});

describe('the client id of an ack (TJ-LIVE-057)', () => {
  it('refuses an empty or over-long client id with invalid_request and writes nothing', async () => {
    const { session, logBytes } = await finishedSession();
    const before = logBytes();
    for (const clientId of ['', 'x'.repeat(129), 'x'.repeat(900 * 1024)])
      await expect(session.ack('r1', { clientId })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(logBytes()).toBe(before);
    await session.ack('r1', { clientId: 'x'.repeat(128) });
    expect(session.runInfo('r1')?.acked).toBe(true);
  });
});
