import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { eventLogOf, expectEvents, inFreshStore, liveClient, range, streamRun, turnJournalOf } from './live-client.js';

// `writer/live-epoch`: a session whose files are removed and created again (spec §18.4) answers a cursor of the
// removed history with a `reset` snapshot when the client sends the epoch of that cursor (spec §6.7).

/**
 * `writer/live-epoch`: an adapter runs a turn, the harness notes the snapshot's `epoch` and `last_seq` (a client's
 * cursor), stops the adapter and removes the session's files; a new adapter runs two turns, so the new log outgrows the
 * cursor. The new snapshot must carry an epoch other than the old one (TJ-EVENT-023, TJ-LIVE-021), the log's first
 * record must carry it and so must every checkpoint (TJ-EVENT-024); a subscription after the old cursor with the old
 * epoch must yield a `reset` snapshot of the whole current view, not the new log's records after the cursor
 * (TJ-LIVE-020); with the new epoch it must yield those records (TJ-LIVE-009).
 */
export async function epochCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-epoch',
    'a session created again has a new epoch, and a cursor of the removed history with its epoch gets a reset snapshot',
    'writer',
    ['TJ-LIVE-020', 'TJ-LIVE-021', 'TJ-EVENT-023', 'TJ-EVENT-024', 'TJ-CONF-041'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        let oldEpoch: unknown;
        let cursor = -1;
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await streamRun(client, 'r1');
          const view = await client.ok('live_snapshot', {}, 'snapshot');
          oldEpoch = view?.epoch;
          cursor = (view?.last_seq ?? -1) as number;
        });
        if (typeof oldEpoch !== 'string') {
          failures.push(
            `the live snapshot of a log the session created has epoch ${JSON.stringify(oldEpoch)}, not a string (TJ-EVENT-023, TJ-LIVE-021)`,
          );
          return failures;
        }
        rmSync(dirname(eventLogOf(root)), { recursive: true, force: true });
        rmSync(turnJournalOf(root), { force: true });
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          for (const requestId of ['n1', 'n2']) {
            await client.ok('live_send', { request_id: requestId, content: 'again' }, `send ${requestId}`);
            await streamRun(client, requestId);
          }
          const view = await client.ok('live_snapshot', {}, 'snapshot of the new log');
          const epoch = view?.epoch;
          const last = (view?.last_seq ?? -1) as number;
          if (typeof epoch !== 'string' || epoch === oldEpoch)
            failures.push(
              `the session created again has epoch ${JSON.stringify(epoch)}; it must be a new one, not ${JSON.stringify(oldEpoch)} (TJ-EVENT-023)`,
            );
          if (last <= cursor + 1) {
            failures.push(`the new log ends at seq ${last}, not past the old cursor ${cursor}: nothing to judge`);
            return;
          }
          const records = recordsOf(eventLogOf(root), failures);
          const wrong = records.filter((r, i) =>
            i === 0 || r.type === 'checkpoint' ? r.epoch !== epoch : r.epoch !== undefined && r.epoch !== epoch,
          );
          if (wrong.length > 0)
            failures.push(
              `the new log's first record and every checkpoint must carry epoch ${JSON.stringify(epoch)}; seq ${String(wrong[0]?.seq)} carries ${JSON.stringify(wrong[0]?.epoch)} (TJ-EVENT-023, TJ-EVENT-024)`,
            );
          expectEvents(
            await client.seqs(cursor, { epoch: oldEpoch, until_seq: last, timeout_ms: 5000 }),
            [`reset@${last}`],
            `after ${cursor} with the epoch of the removed log`,
            failures,
          );
          expectEvents(
            await client.seqs(cursor, { epoch, until_seq: last, timeout_ms: 5000 }),
            range(cursor + 1, last),
            `after ${cursor} with the new log's epoch`,
            failures,
          );
        });
        return failures;
      }),
  );
}
