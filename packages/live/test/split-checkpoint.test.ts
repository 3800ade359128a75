// A live session whose conversation outgrows the 16 MiB line-size limit: its writer splits the checkpoints
// (TJ-EVENT-028), and a subscriber receives every part, with the log's own seqs and payloads (TJ-LIVE-008,
// TJ-REPLAY-012).
import { join } from 'node:path';
import { openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { logLines, take, tempStore } from './support.js';

describe('a live session past the line-size limit', () => {
  it('delivers a split checkpoint’s parts to a subscriber as the log holds them', async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false, checkpointInterval: 2 });
    const session = await hub.session('s1');
    const subscription = session.subscribe({ after: -1 });
    const sent = await session.send({ requestId: 'r1', content: 'read the logs' });
    if (!sent.created) throw new Error('expected a new run');
    // 24 tool results of 1 MiB: the list passes 16 MiB, and the checkpoints that fall due after it are split. A
    // checkpoint falls due once as many bytes as the last one's line follow it (TJ-EVENT-006), so their sizes roughly
    // double: here the last before 16 MiB holds about 12.6 MB, and the next falls due about 12.6 MB (6 pairs) later.
    for (let n = 0; n < 24; n += 1)
      await sent.run.toolResult({ toolCallId: `c${n}`, output: `${n} ${'z'.repeat(1024 * 1024)}` });
    await sent.run.done();
    const file = join(root, 's1', 'events.jsonl');
    const lines = logLines(file);
    expect(lines.some((record) => record.type === 'checkpoint.part')).toBe(true);
    const events = await take(subscription, lines.length);
    await hub.close();
    const received = events.map((event) => (event.kind === 'record' ? event.record : event.kind));
    expect(received.map((record) => (typeof record === 'string' ? record : record.seq))).toEqual(
      lines.map((record) => record.seq),
    );
    for (const [i, record] of received.entries()) {
      const line = lines[i] as (typeof lines)[number];
      if (typeof record === 'string' || !line.type.startsWith('checkpoint')) continue;
      expect(record.type).toBe(line.type);
      expect(record.payload).toEqual(line.payload);
    }
  });
});
