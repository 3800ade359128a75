// A turn journal on a record store reads its session's other shards incrementally (StoreSiblings, spec §19): a shard
// that a sweep rewrote (lines dropped, a `compacted` record added) and that then grew past where the last read ended
// must be read again from its start, never from the old cursor, which now falls inside another line.
import type { RecordStore } from '@turnjournal/reader/record-store';
import type { StoreLocation } from '@turnjournal/reader/store-format';
import { SimulatedBacking, SimulatedRecordStore } from '@turnjournal/test-support';
import { describe, expect, it } from 'vitest';
import { openTurnJournal } from '../support/internals.js';

const SHARD_B: StoreLocation = { family: 'turn', sessionId: 's', shard: 'b' };

async function linesOf(store: RecordStore, location: StoreLocation): Promise<Uint8Array[]> {
  const reader = await store.openReader(location);
  const lines: Uint8Array[] = [];
  try {
    const bytes = new Uint8Array(await reader.end());
    await reader.read(bytes, 0, bytes.length, 0);
    let start = 0;
    for (let lf = bytes.indexOf(0x0a); lf >= 0; lf = bytes.indexOf(0x0a, start)) {
      lines.push(bytes.subarray(start, lf + 1));
      start = lf + 1;
    }
  } finally {
    await reader.close();
  }
  return lines;
}

describe('a shard rewritten behind a reader (StoreSiblings)', () => {
  it('is read again from its start when it grew past the old cursor after the rewrite', async () => {
    const store = new SimulatedRecordStore(new SimulatedBacking());
    const b = await openTurnJournal({ store, sessionId: 's', shard: 'b' });
    await b.submit({ turnId: 't-old', content: 'x'.repeat(300) });
    await b.complete('t-old');
    await b.submit({ turnId: 't-kept', content: 'kept' });
    await b.close();
    const a = await openTurnJournal({ store, sessionId: 's', shard: 'a' });
    // A caller id A does not know: A reads shard b to the end (its cursor is b's end now).
    expect((await a.submit({ turnId: 't-a', content: 'from a' })).created).toBe(true);

    // A sweep drops t-old's lines from b; then b gains a turn whose lines take it past the old end.
    const before = await linesOf(store, SHARD_B);
    const oldEnd = before.reduce((sum, line) => sum + line.length, 0);
    const rewriter = await store.openJournal(SHARD_B, { durability: 'every' });
    await rewriter.rewrite(before.filter((line) => !new TextDecoder().decode(line).includes('"t-old"')));
    await rewriter.close();
    const b2 = await openTurnJournal({ store, sessionId: 's', shard: 'b' });
    await b2.submit({ turnId: 't-new', content: 'y'.repeat(800) });
    await b2.close();
    expect((await linesOf(store, SHARD_B)).reduce((sum, line) => sum + line.length, 0)).toBeGreaterThan(oldEnd);

    // A retry of t-new reaching A must be recognised from b (TJ-TURN-003), not written a second time.
    const retried = await a.submit({ turnId: 't-new', content: 'y'.repeat(800) });
    expect(retried.created, 'the retry is recognised from the rewritten shard').toBe(false);
    await a.close();
  });
});
