// The event-log writer on the record-store seam (spec §19): opened through a store, it writes the same lines, recovers
// the same state and compacts the same way whichever backend holds the log — the file store, or the simulated store
// (a model of a database: no bytes on a disk, asynchronous commits).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  converseThreeRuns,
  openScriptedLog,
  SCRIPT_START,
  SimulatedBacking,
  SimulatedRecordStore,
} from '@turnjournal/test-support';
import { openEventLog } from '@turnjournal/writer';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';

/** The lines the simulated store holds for the log of `s1`. */
function simulatedLines(backing: SimulatedBacking): string {
  const journal = backing.journals.get('s1/events.jsonl');
  if (journal === undefined) throw new Error('the simulated store holds no log of s1');
  return Buffer.concat(journal.lines).toString('utf8');
}

describe('an event log opened through a record store (spec §19)', () => {
  it('writes byte for byte the lines it writes to a file, and recovers the same state on reopen', async () => {
    const root = tempDir();
    const backing = new SimulatedBacking();
    const stores = { file: openFileRecordStore({ root }), simulated: new SimulatedRecordStore(backing) };
    const states: Record<string, unknown> = {};
    for (const [name, store] of Object.entries(stores)) {
      const clock = { now: SCRIPT_START };
      const log = await openScriptedLog(store, clock);
      await converseThreeRuns(log);
      const before = { snapshot: log.snapshot(), runs: [...log.runs().values()] };
      await log.close();
      const reopened = await openScriptedLog(store, clock);
      expect({ snapshot: reopened.snapshot(), runs: [...reopened.runs().values()] }, name).toEqual(before);
      const next = await reopened.appendMessage({ role: 'user', content: 'after the reopen', id: 'late' });
      expect(next.seq, `${name}: the next seq follows the last record`).toBe((before.snapshot.lastSeq ?? -1) + 1);
      await reopened.close();
      states[name] = before;
    }
    expect(states.simulated).toEqual(states.file);
    const fileLines = readFileSync(join(root, 's1', 'events.jsonl'), 'utf8');
    expect(simulatedLines(backing)).toBe(fileLines);
    expect(fileLines.split('\n').filter((line) => line.includes('"type":"checkpoint"')).length).toBeGreaterThan(2);
  });

  it('compacts through the store: the rewrite keeps the last checkpoint and what follows, and the log goes on', async () => {
    const backing = new SimulatedBacking();
    const store = new SimulatedRecordStore(backing);
    const clock = { now: SCRIPT_START };
    const log = await openScriptedLog(store, clock);
    await converseThreeRuns(log);
    const before = log.snapshot();
    const lines = simulatedLines(backing).split('\n').length;
    // Every run is finished and acknowledged nowhere: a retention of 0 with a delivery window of 0 lets them go.
    const compaction = await log.compact({ retentionSeconds: 0, deliveryWindowSeconds: 0, now: clock.now + 1000 });
    expect(compaction.compacted).toBe(true);
    expect(simulatedLines(backing).split('\n').length).toBeLessThan(lines);
    expect(simulatedLines(backing).startsWith('{"seq":')).toBe(true);
    await log.appendMessage({ role: 'user', content: 'after compaction', id: 'late' });
    await log.close();
    const reopened = await openScriptedLog(store, clock);
    expect(reopened.snapshot().messages).toEqual([
      ...before.messages,
      { role: 'user', content: 'after compaction', id: 'late' },
    ]);
    await reopened.close();
  });

  it('is refused with `journal_locked` while another owner holds the log in the same store', async () => {
    const backing = new SimulatedBacking();
    const clock = { now: SCRIPT_START };
    const first = await openScriptedLog(new SimulatedRecordStore(backing), clock);
    await expect(openScriptedLog(new SimulatedRecordStore(backing), clock)).rejects.toMatchObject({
      code: 'journal_locked',
    });
    await first.close();
  });

  it('refuses a store given with a file or a root, and an invalid session id', async () => {
    const store = new SimulatedRecordStore();
    await expect(
      openEventLog({ store, sessionId: 's1', root: '/tmp' } as unknown as Parameters<typeof openEventLog>[0]),
    ).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(openEventLog({ store, sessionId: '../up' })).rejects.toMatchObject({ code: 'invalid_identifier' });
  });
});
