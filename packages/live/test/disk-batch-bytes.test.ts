// A subscriber catching up from the store holds one batch of records (TJ-LIVE-011: a server bounds the memory a
// subscriber can hold). The batch was bounded by count only — 256 records — so over large tool results (up to the
// 16 MiB line limit each) one reconnecting client could hold gigabytes. It is now bounded by bytes too.
import { openConversationHub } from '@turnjournal/live';
import { type FileSystem, nodeFileSystem } from '@turnjournal/writer/file-system';
import { describe, expect, it } from 'vitest';
import { tempStore, withPaths } from './support.js';

describe('a subscriber catching up over large records (TJ-LIVE-011, TJ-LIVE-012)', () => {
  it('reads a bounded number of bytes per batch and still yields every record once, in order', async () => {
    const root = tempStore('tj-live-batch-');
    const { fs: tracked, pathOf } = withPaths(nodeFileSystem);
    const counter = { bytes: 0 };
    const fs: FileSystem = {
      ...tracked,
      async read(fd, buffer, offset, length, position) {
        const read = await nodeFileSystem.read(fd, buffer, offset, length, position);
        if (pathOf(fd)?.endsWith('events.jsonl')) counter.bytes += read;
        return read;
      },
    };
    // A window of 2 records: a subscriber from -1 catches up from the store. No automatic checkpoint (each would hold
    // every message so far): every record is about 64 KiB.
    const hub = openConversationHub({ root, fs, retention: false, ringRecords: 2, checkpointInterval: 1_000_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    const output = 'o'.repeat(64 * 1024);
    // 150 results: 300 records of about 64 KiB, 19 MiB; 256 of them are 16 MiB.
    for (let i = 0; i < 150; i += 1) await sent.run.toolResult({ toolCallId: `c${i}`, output });
    await sent.run.done();
    const head = session.durableSeq;
    const subscription = session.subscribe({ after: -1 });
    counter.bytes = 0;
    const first = await subscription.next();
    expect(first.done).toBe(false);
    // One batch: its 4 MiB bound plus the seek's probes and the reader's read-ahead (about 6 MiB read here; 18 MiB
    // before, for a batch of 256 records).
    expect(counter.bytes).toBeLessThan(8 * 1024 * 1024);
    const seqs = [first.value.kind === 'record' ? first.value.record.seq : -99];
    while (seqs.length < head + 1) {
      const next = await subscription.next();
      if (next.done === true) break;
      seqs.push(next.value.kind === 'record' ? next.value.record.seq : -99);
    }
    expect(seqs).toEqual(Array.from({ length: head + 1 }, (_, i) => i));
    subscription.close();
    await hub.close();
  }, 20_000);
});
