// The turn journal on the record-store seam (spec §19): opened through a store, it writes the lines it writes to a
// file, and two shards of one session (one per writer process, spec §4.4) see each other's turns through the store:
// a retry that reached the other shard first is recognised, not written twice (TJ-TURN-003), and a turn submitted
// there can be advanced here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { SimulatedBacking, SimulatedRecordStore } from '@turnjournal/test-support';
import { openTurnJournal } from '@turnjournal/writer';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';

function clock(): () => number {
  let now = Date.parse('2026-11-29T01:00:00.000Z');
  return () => (now += 250);
}

async function twoShards(store: RecordStore): Promise<void> {
  const time = clock();
  const a = await openTurnJournal({ store, sessionId: 's1', shard: 'a', clock: time });
  const b = await openTurnJournal({ store, sessionId: 's1', shard: 'b', clock: time });
  const first = await a.submit({ turnId: 't1', content: 'hello' });
  expect(first.created).toBe(true);
  const retry = await b.submit({ turnId: 't1', content: 'hello' });
  expect(retry, 'the retry that reached the other shard is recognised').toMatchObject({ created: false });
  await b.workerStarted('t1');
  await a.submit({ turnId: 't2', content: 'second' });
  await a.complete('t1', { assistantMessageIndex: 1 }).catch(() => undefined);
  await b.refreshSiblings();
  expect(b.stateOf('t2')).toBe('submitted');
  await a.close();
  await b.close();
  const reopened = await openTurnJournal({ store, sessionId: 's1', shard: 'a', clock: time });
  expect(reopened.stateOf('t1')).toBe(b.stateOf('t1'));
  expect(reopened.pendingTurns().map((t) => t.turnId)).toEqual(['t2']);
  await reopened.close();
}

describe('a turn journal opened through a record store (spec §19)', () => {
  it('writes the file’s lines on the simulated store, and its shards see each other through the store', async () => {
    const root = tempDir();
    const backing = new SimulatedBacking();
    await twoShards(openFileRecordStore({ root }));
    await twoShards(new SimulatedRecordStore(backing));
    for (const shard of ['a', 'b']) {
      const lines = Buffer.concat(backing.journals.get(`_turn_journal/s1~${shard}.jsonl`)?.lines ?? []).toString();
      expect(lines, `shard ${shard}`).toBe(readFileSync(join(root, '_turn_journal', `s1~${shard}.jsonl`), 'utf8'));
      expect(lines.length).toBeGreaterThan(0);
    }
  });

  it('refuses a store given with a directory, and an invalid shard', async () => {
    const store = new SimulatedRecordStore();
    await expect(
      openTurnJournal({ store, dir: '/tmp', sessionId: 's1' } as unknown as Parameters<typeof openTurnJournal>[0]),
    ).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(openTurnJournal({ store, sessionId: 's1', shard: '../x' })).rejects.toMatchObject({
      code: 'invalid_identifier',
    });
  });
});
