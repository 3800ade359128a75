import { join } from 'node:path';
import { observeEventLog } from '../../../fixtures/run-store-fixtures.js';
import { bytesOf, recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import {
  eventLogOf,
  finishedRun,
  inFreshStore,
  isFinishing,
  type Json,
  liveClient,
  writeLines,
} from './live-client.js';

// `writer/live-snapshot-ack`: snapshots, acknowledgements and delivery expiry (spec §18.4).

/**
 * `writer/live-snapshot-ack`: a live snapshot reflects exactly the records through its `last_seq` (TJ-LIVE-013:
 * compared with a reader's fold of that prefix, mid-run and after it); an ack below the finishing record or beyond the
 * last record is refused (TJ-LIVE-014); an acknowledged run leaves `undelivered` (and only a client's ack writes
 * `delivery.ack`, TJ-EVENT-012), and a finished run older than the delivery window is not listed (TJ-LIVE-015).
 */
export async function snapshotAckCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-snapshot-ack',
    'a live snapshot is the fold of the log through its last_seq; acks below the finish or past the log are refused; old runs expire',
    'writer',
    ['TJ-LIVE-013', 'TJ-LIVE-014', 'TJ-LIVE-015', 'TJ-CONF-043', 'TJ-EVENT-012'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        const compare = async (snapshot: Json | null, what: string) => {
          if (snapshot === null) return;
          const through = snapshot.last_seq as number | null;
          const lines = bytesOf(log)
            .toString('utf8')
            .split('\n')
            .filter((l) => l.length > 0);
          const prefix = lines.filter((l) => through !== null && ((JSON.parse(l) as Json).seq as number) <= through);
          const prefixFile = join(root, 'prefix', 'events.jsonl');
          writeLines(prefixFile, prefix);
          const state = await observeEventLog(prefixFile);
          const fold = 'fold' in state ? state.fold : state;
          const mine = { messages: snapshot.messages, active: snapshot.active_request_id, overlay: snapshot.overlay };
          const theirs = { messages: fold.messages, active: fold.active_request_id, overlay: fold.overlay };
          if (JSON.stringify(mine) !== JSON.stringify(theirs))
            failures.push(
              `${what}: the snapshot ${JSON.stringify(mine).slice(0, 300)} is not the fold of the log through its last_seq ${through}: ${JSON.stringify(theirs).slice(0, 300)}`,
            );
        };
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await client.step('r1', 'delta', { text: 'Hel' });
          await client.step('r1', 'delta', { text: 'lo' });
          await client.step('r1', 'tool_start', { tool_call_id: 'c1', tool: 'search' });
          await client.step('r1', 'delta', { text: 'partial' });
          await compare(await client.ok('live_snapshot', {}, 'snapshot mid-run'), 'mid-run');
          await client.step('r1', 'done');
          const after = await client.ok('live_snapshot', {}, 'snapshot after done');
          await compare(after, 'after done');
          if (JSON.stringify(after?.undelivered) !== '["r1"]')
            failures.push(`after done, undelivered is ${JSON.stringify(after?.undelivered)}, not ["r1"]`);
          // No client confirmed anything yet: the server has no receipt to record (TJ-EVENT-012).
          if (recordsOf(log, failures).some((r) => r.type === 'delivery.ack'))
            failures.push('a delivery.ack is in the log after done, before any client acknowledged r1 (TJ-EVENT-012)');
          const finish = recordsOf(log, failures).find((r) => isFinishing(r.type))?.seq as number;
          await client.refused(
            log,
            'live_ack',
            { request_id: 'r1', through_seq: finish - 1 },
            `an ack through ${finish - 1}, below the finishing record ${finish}`,
          );
          // No client can have received a record past the last one written (TJ-LIVE-014's upper bound).
          const beyond = Math.max(...recordsOf(log, failures).map((r) => r.seq as number)) + 1;
          await client.refused(
            log,
            'live_ack',
            { request_id: 'r1', through_seq: beyond },
            `an ack through ${beyond}, beyond the last record of the log`,
          );
          await client.ok(
            'live_ack',
            { request_id: 'r1', client_id: 'c1', through_seq: finish },
            'ack through the finish',
          );
          const acked = await client.ok('live_snapshot', { client_id: 'c1' }, 'snapshot for c1');
          if (JSON.stringify(acked?.undelivered) !== '[]')
            failures.push(`after c1's ack, undelivered for c1 is ${JSON.stringify(acked?.undelivered)}, not []`);
        });
        // A log with a run finished in 2020 and one finished a minute ago, neither acknowledged.
        const oldRoot = join(root, 'expiry');
        const recent = new Date(Date.now() - 60_000).toISOString();
        writeLines(eventLogOf(oldRoot), [
          ...finishedRun(0, 'old', '2020-01-01T00:00:00Z'),
          ...finishedRun(5, 'new', recent),
        ]);
        await withAdapter(context, async (process) => {
          const snapshot = await liveClient(process, oldRoot, failures).ok(
            'live_snapshot',
            {},
            'snapshot of the old log',
          );
          if (JSON.stringify(snapshot?.undelivered) !== '["new"]')
            failures.push(
              `a run finished in 2020 is past the 48 h delivery window: undelivered is ${JSON.stringify(snapshot?.undelivered)}, not ["new"]`,
            );
        });
        return failures;
      }),
  );
}
