// The retention sweep through the record-store seam (spec §14.1, §19, TJ-STORE-011): on the simulated store (a model
// of a database) it prunes what the sweep of a directory prunes and writes byte for byte the same journals; it owns
// every journal of a session while it rewrites them, so a live writer makes it skip the session, and a journal whose
// end moved since the audit is left for the next sweep.
import { join } from 'node:path';
import type { RecordStore, WritableJournal } from '@turnjournal/reader/record-store';
import type { StoreLocation } from '@turnjournal/reader/store-format';
import { SimulatedBacking, SimulatedRecordStore } from '@turnjournal/test-support';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { describe, expect, it } from 'vitest';
import { openTurnJournal, sweepTurnJournals } from '../support/internals.js';
import { readLinesOf } from '../support/space.js';
import { tempDir } from '../support/temp.js';

const HOUR = 3600 * 1000;
const NOW = Date.parse('2026-11-22T12:00:00Z');

/** Session `s` over two shards: two turns three days old (one completed, one interrupted), one an hour old. */
async function converse(store: RecordStore): Promise<void> {
  let now = NOW - 72 * HOUR;
  const clock = () => now;
  const a = await openTurnJournal({ store, sessionId: 's', shard: 'a', clock });
  const b = await openTurnJournal({ store, sessionId: 's', shard: 'b', clock });
  await a.submit({ content: 'old and done', turnId: 'old-done' });
  await a.complete('old-done');
  await a.submit({ content: 'old and cut', turnId: 'old-cut' });
  await b.workerStarted('old-cut');
  await b.interrupt('old-cut', 'cancelled');
  now = NOW - HOUR;
  await b.submit({ content: 'young', turnId: 'young' });
  await b.complete('young');
  await Promise.all([a.close(), b.close()]);
}

function simulatedText(backing: SimulatedBacking, key: string): string {
  const journal = backing.journals.get(key);
  if (journal === undefined) throw new Error(`the simulated store holds no ${key}`);
  return Buffer.concat(journal.lines).toString('utf8');
}

const shard = (name: string): StoreLocation => ({ family: 'turn', sessionId: 's', shard: name });

describe('sweepTurnJournals on a record store (spec §14.1 through §19)', () => {
  it('prunes what the sweep of the directory prunes, and leaves byte for byte the same journals', async () => {
    const root = tempDir();
    await converse(openFileRecordStore({ root }));
    const fromDir = await sweepTurnJournals(join(root, '_turn_journal'), { clock: () => NOW });

    const backing = new SimulatedBacking();
    const store = new SimulatedRecordStore(backing);
    await converse(store);
    const fromStore = await sweepTurnJournals(store, { clock: () => NOW });

    expect(fromStore.dir).toBe('simulated://store');
    expect(fromStore.sessions.map((s) => [s.sessionId, s.prunedTurnIds, s.skipped])).toEqual([
      ['s', ['old-cut', 'old-done'], undefined],
    ]);
    expect(fromStore.sessions.map((s) => [s.prunedTurnIds, s.rewrittenFiles.length])).toEqual(
      fromDir.sessions.map((s) => [s.prunedTurnIds, s.rewrittenFiles.length]),
    );
    for (const name of ['a', 'b']) {
      const file = readLinesOf(join(root, '_turn_journal', `s~${name}.jsonl`)).toString('utf8');
      expect(simulatedText(backing, `_turn_journal/s~${name}.jsonl`), `shard ${name}`).toBe(file);
    }
    expect(simulatedText(backing, '_turn_journal/s~a.jsonl')).not.toContain('old and done');
    expect(simulatedText(backing, '_turn_journal/s~b.jsonl')).toContain('"turn_id":"young"');

    // A second sweep finds nothing older than the window: the journals stay as they are.
    const again = await sweepTurnJournals(store, { clock: () => NOW });
    expect(again.sessions.map((s) => s.skipped)).toEqual(['no turn is terminal, delivered and older than the window']);
  });

  it('skips a session whose journal a live writer owns (TJ-RET-008, TJ-RET-009)', async () => {
    const backing = new SimulatedBacking();
    await converse(new SimulatedRecordStore(backing));
    const before = simulatedText(backing, '_turn_journal/s~a.jsonl');
    const owner = await new SimulatedRecordStore(backing).openJournal(shard('a'), { durability: 'every' });
    const report = await sweepTurnJournals(new SimulatedRecordStore(backing), { clock: () => NOW });
    expect(report.sessions[0]?.skipped).toMatch(/live writer holds simulated:\/\/_turn_journal\/s~a\.jsonl/);
    expect(simulatedText(backing, '_turn_journal/s~a.jsonl')).toBe(before);
    await owner.close();
  });

  it('leaves a session alone when a journal grew between the audit and the sweep owning it (TJ-STORE-011)', async () => {
    const backing = new SimulatedBacking();
    await converse(new SimulatedRecordStore(backing));
    const store = new SimulatedRecordStore(backing);
    // A writer appends to shard b after the audit read it, just before the sweep owns it.
    let appended = false;
    const racing: RecordStore = Object.assign(Object.create(store) as RecordStore, {
      openJournal: async (location: StoreLocation, options: { durability: 'every' }): Promise<WritableJournal> => {
        if (!appended && location.family === 'turn' && location.shard === 'b') {
          appended = true;
          const writer = await openTurnJournal({ store, sessionId: 's', shard: 'b', clock: () => NOW });
          await writer.submit({ content: 'just now', turnId: 'late' });
          await writer.close();
        }
        return store.openJournal(location, options);
      },
    });
    const before = simulatedText(backing, '_turn_journal/s~a.jsonl');
    const report = await sweepTurnJournals(racing, { clock: () => NOW });
    expect(appended).toBe(true);
    expect(report.sessions[0]?.skipped).toMatch(/s~b\.jsonl changed during the sweep \(its end moved\)/);
    expect(simulatedText(backing, '_turn_journal/s~a.jsonl'), 'nothing is rewritten').toBe(before);
    expect(simulatedText(backing, '_turn_journal/s~b.jsonl')).toContain('"turn_id":"late"');
  });
});
