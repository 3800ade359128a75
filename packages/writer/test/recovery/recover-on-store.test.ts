// Startup recovery through the record-store seam (spec §12, §19): a survivor audits a store it does not own and closes
// what a crashed host left — its pending turns through the host hooks, its event logs' unfinished runs — without
// touching what a live owner holds. The same on the simulated store (a model of a database) and on the file store,
// where it must plan exactly what the recovery of the store's paths plans.
import { auditStore } from '@turnjournal/reader';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { SimulatedBacking, SimulatedRecordStore } from '@turnjournal/test-support';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { describe, expect, it } from 'vitest';
import { openEventLog, openTurnJournal, type RecoveryHooks, recoverStore } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

/** A host transcript whose hooks are idempotent and keyed by turn id (TJ-RECOV-008). */
function transcript() {
  const userMessages = new Map<string, string>();
  const markers = new Set<string>();
  const hooks: RecoveryHooks = {
    ensureUserMessage: (turn, submitted) => {
      if (!userMessages.has(turn.turnId)) userMessages.set(turn.turnId, String(submitted.content));
    },
    ensureInterruptionMarker: (turn) => {
      markers.add(turn.turnId);
    },
  };
  return { userMessages, markers, hooks };
}

/** What a host that dies mid-work leaves: a finished turn, two pending ones, an event log with a run never finished. */
async function workOfAHostThatDies(store: RecordStore): Promise<void> {
  const turns = await openTurnJournal({ store, sessionId: 'sess', shard: 'host-a' });
  const done = await turns.submit({ content: 'answered', turnId: 't-done' });
  await turns.complete(done.turnId);
  await turns.submit({ content: 'pending one', turnId: 't-p1', streamId: 'stream-1' });
  await turns.workerStarted('t-p1');
  await turns.submit({ content: 'pending two', turnId: 't-p2' });
  const log = await openEventLog({ store, sessionId: 'chat' });
  await log.chatStarted({ requestId: 'r-finished' });
  await log.chatDone({ requestId: 'r-finished' });
  await log.chatStarted({ requestId: 'r-open' });
  await log.segmentStarted({ requestId: 'r-open', messageId: 'm1' });
  await log.delta({ requestId: 'r-open', messageId: 'm1', text: 'half an ans' });
  await log.flush();
  // The host's writers go without a word: on the simulated store the caller crashes the backing; on the file store
  // they close (a closed writer and a dead one leave their turns alike: pending, with no owner).
  if (store instanceof SimulatedRecordStore) return;
  await turns.close();
  await log.close();
}

describe('recoverStore on a record store (spec §12 through §19)', () => {
  it('TJ-STORE-012: a survivor closes a crashed host’s pending turns and unfinished runs, and leaves a live owner’s turn alone', async () => {
    const backing = new SimulatedBacking();
    await workOfAHostThatDies(new SimulatedRecordStore(backing));
    backing.crash();
    // Another host is alive and holds its own shard with a turn in progress.
    const live = await openTurnJournal({
      store: new SimulatedRecordStore(backing),
      sessionId: 'sess',
      shard: 'host-c',
    });
    await live.submit({ content: 'being answered', turnId: 't-live' });

    const survivor = new SimulatedRecordStore(backing);
    const host = transcript();
    const recovery = await recoverStore(survivor, { apply: true, hooks: host.hooks });
    expect(recovery.turns.map((turn) => [turn.turnId, turn.outcome, turn.performed])).toEqual([
      ['t-p1', 'recovered', ['ensure_user_message', 'ensure_interruption_marker', 'append_interrupted']],
      ['t-p2', 'recovered', ['ensure_user_message', 'ensure_interruption_marker', 'append_interrupted']],
    ]);
    // The submitted records came back through the store's reader (TJ-RECOV-003): exactly what the users sent.
    expect(Object.fromEntries(host.userMessages)).toEqual({ 't-p1': 'pending one', 't-p2': 'pending two' });
    expect(recovery.heldFiles).toEqual(['simulated://_turn_journal/sess~host-c.jsonl']);
    expect(recovery.eventLogs).toEqual([
      { file: 'simulated://chat/events.jsonl', cancelled: [{ requestId: 'r-open', seq: expect.any(Number) }] },
    ]);

    const audit = await auditStore(survivor);
    const states = Object.fromEntries(audit.check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state])));
    expect(states).toEqual({
      't-done': 'completed',
      't-p1': 'interrupted',
      't-p2': 'interrupted',
      't-live': 'submitted',
    });
    expect(audit.check.eventLogs.map((log) => log.activeRequestId)).toEqual([null]);
    expect(
      [...audit.plan].map((turn) => turn.turnId),
      'the live owner’s turn is never planned',
    ).toEqual([]);

    // Run again: nothing is left to do, and nothing is appended twice (TJ-RECOV-009).
    const again = await recoverStore(survivor, { apply: true, hooks: host.hooks });
    expect(again.turns).toEqual([]);
    expect(again.eventLogs).toEqual([]);
    await live.close();
  });

  it('on the file store, plans and does what the recovery of the store’s paths does', async () => {
    const outcomes: unknown[] = [];
    for (const through of ['store', 'paths'] as const) {
      const root = tempDir();
      const store = openFileRecordStore({ root });
      await workOfAHostThatDies(store);
      const host = transcript();
      const recovery = await recoverStore(through === 'store' ? store : [root], { apply: true, hooks: host.hooks });
      outcomes.push({
        turns: recovery.turns,
        messages: Object.fromEntries(host.userMessages),
        markers: [...host.markers],
        held: recovery.heldFiles,
        logs: recovery.eventLogs.map((log) => ({ ...log, file: log.file.slice(root.length) })),
        states: (await auditStore([root])).check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state])),
      });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect((outcomes[0] as { turns: unknown[] }).turns).toHaveLength(2);
  });
});
