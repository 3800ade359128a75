// What recovery asks of host hooks (spec §12): after a crash between the hooks and the `interrupted` append, a rerun
// calls the hooks again for the same turn, so only hooks that are idempotent and keyed by turn id end with one marker
// per turn.
import { describe, expect, it } from 'vitest';
import { openTurnJournal, type RecoveryHooks, recoverStore } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

async function pendingTurn(): Promise<string> {
  const root = tempDir();
  const journal = await openTurnJournal({ dir: `${root}/_turn_journal`, sessionId: 'sess', shard: '1' });
  await journal.submit({ content: 'pending', turnId: 't-p1' });
  await journal.workerStarted('t-p1');
  await journal.close();
  return root;
}

/** Host hooks that record every call by turn id; `keyed` hosts add a marker only when the turn has none. */
function host(keyed: boolean, failAfterMarker: { value: boolean }) {
  const calls: string[] = [];
  const markers: string[] = [];
  const hooks: RecoveryHooks = {
    ensureUserMessage: (turn) => {
      calls.push(`user:${turn.turnId}`);
    },
    ensureInterruptionMarker: (turn) => {
      calls.push(`marker:${turn.turnId}`);
      if (!keyed || !markers.includes(turn.turnId)) markers.push(turn.turnId);
      // The process dies after the host saved its marker and before recovery appended `interrupted`.
      if (failAfterMarker.value) throw new Error('simulated crash after the marker');
    },
  };
  return { hooks, calls, markers };
}

describe('host hooks across a recovery rerun (TJ-RECOV-008)', () => {
  it('calls the hooks again with the same turn id after a crash: a keyed, idempotent host ends with one marker; an append-only one with two (TJ-RECOV-008)', async () => {
    for (const keyed of [true, false]) {
      const root = await pendingTurn();
      const crash = { value: true };
      const h = host(keyed, crash);
      await expect(recoverStore([root], { apply: true, hooks: h.hooks })).rejects.toThrow(
        'simulated crash after the marker',
      );
      crash.value = false;
      await recoverStore([root], { apply: true, hooks: h.hooks });
      // Both runs reached the hooks with the turn's id, the key a host must use.
      expect(h.calls).toEqual(['user:t-p1', 'marker:t-p1', 'user:t-p1', 'marker:t-p1']);
      expect(h.markers).toEqual(keyed ? ['t-p1'] : ['t-p1', 't-p1']);
    }
  });
});
