// The store check through the record-store seam (spec §13, §19): the same lines, held by a file store or by the
// simulated store (a model of a database), give the same derivation and findings, names apart — duplicates and
// conflicting duplicates across shards included, whose representatives the check reads back through the store.
import { checkStore } from '@turnjournal/reader';
import type { RecordStore } from '@turnjournal/reader/record-store';
import type { StoreLocation } from '@turnjournal/reader/store-format';
import { SimulatedBacking, SimulatedRecordStore } from '@turnjournal/test-support';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';

const line = (record: Record<string, unknown>) => new TextEncoder().encode(`${JSON.stringify(record)}\n`);
const turn = (event: string, turnId: string, extra: Record<string, unknown> = {}) =>
  line({ version: 1, event, turn_id: turnId, session_id: 's', created_at: 1_770_000_000, ...extra });

/** Two shards of session `s` and one of `t`: a turn submitted in both shards (an exact copy), a conflicting copy. */
const SHARDS: readonly [StoreLocation, Uint8Array[]][] = [
  [
    { family: 'turn', sessionId: 's', shard: 'a' },
    [
      turn('submitted', 't1', { role: 'user', content: 'hello' }),
      turn('submitted', 't2', { role: 'user', content: 'first words' }),
    ],
  ],
  [
    { family: 'turn', sessionId: 's', shard: 'b' },
    [
      turn('submitted', 't1', { role: 'user', content: 'hello' }),
      turn('submitted', 't2', { role: 'user', content: 'other words' }),
      turn('completed', 't1'),
    ],
  ],
  [{ family: 'turn', sessionId: 't' }, [turn('submitted', 'u1', { role: 'user', content: 'x', session_id: 't' })]],
];

async function fill(store: RecordStore): Promise<void> {
  for (const [location, lines] of SHARDS) {
    const journal = await store.openJournal(location, { durability: 'every' });
    for (const bytes of lines) await journal.appendLine(bytes);
    await journal.close();
  }
}

describe('checkStore of a record store (spec §13 through §19)', () => {
  it('derives what the check of the same files derives: exact and conflicting duplicates across shards', async () => {
    const root = tempDir();
    await fill(openFileRecordStore({ root }));
    const store = new SimulatedRecordStore(new SimulatedBacking());
    await fill(store);
    const fromFiles = await checkStore([root]);
    const fromStore = await checkStore(store);
    const named = (text: string) => JSON.parse(text.replaceAll(`${root}/`, '').replaceAll('simulated://', ''));
    expect(fromStore.sessions.map((s) => s.turns.map((t) => [t.turnId, t.state]))).toEqual([
      [
        ['t1', 'completed'],
        ['t2', 'submitted'],
      ],
      [['u1', 'submitted']],
    ]);
    expect(fromStore.findings.map((f) => f.code).sort()).toEqual(['conflicting_duplicate', 'duplicate_event']);
    expect(named(JSON.stringify({ s: fromStore.sessions, f: fromStore.findings }))).toEqual(
      named(JSON.stringify({ s: fromFiles.sessions, f: fromFiles.findings })),
    );
  });
});
