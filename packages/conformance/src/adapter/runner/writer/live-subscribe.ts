import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import {
  describe,
  eventLogOf,
  expectEvents,
  finishedRun,
  inFreshStore,
  liveClient,
  range,
  streamRun,
  writeLines,
} from './live-client.js';

// `writer/live-subscribe` and `writer/live-catch-up`: subscriptions from a cursor (spec §18.3).

/**
 * `writer/live-subscribe`: a subscription yields every durable record after its cursor, once and in order (TJ-LIVE-009),
 * replayed and then live while a run appends; a cursor ahead of the log yields an `ahead` snapshot (TJ-LIVE-010); a
 * cursor whose next seq the log does not hold yields a `compacted` snapshot, never a later record (TJ-LIVE-018).
 */
export async function subscribeCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-subscribe',
    'subscribe yields every durable record after the cursor once and in order, replayed then live; ahead and compacted snapshots',
    'writer',
    ['TJ-LIVE-009', 'TJ-LIVE-010', 'TJ-LIVE-018', 'TJ-CONF-041'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await streamRun(client, 'r1');
          const last = ((await client.ok('live_snapshot', {}, 'snapshot'))?.last_seq ?? -1) as number;
          const onDisk = recordsOf(eventLogOf(root), failures).map((r) => r.seq as number);
          if (last !== onDisk.at(-1))
            failures.push(`the snapshot's last_seq ${last} is not the log's last seq ${onDisk.at(-1)}`);
          expectEvents(await client.seqs(-1), range(0, last), 'after -1', failures);
          expectEvents(await client.seqs(3), range(4, last), 'after 3', failures);
          expectEvents(await client.seqs(last), [], `after ${last} (the last seq)`, failures);
          expectEvents(await client.seqs(last + 5), [`ahead@${last}`], `after ${last + 5}`, failures);
          // Live: a subscription waiting from two records back while a second run appends (TJ-CONF-041).
          const waiting = client.seqs(last - 2, { until_seq: last + 3, timeout_ms: 10_000 });
          await client.ok('live_send', { request_id: 'r2', content: 'again' }, 'send r2');
          await client.step('r2', 'delta', { text: 'more' });
          await client.step('r2', 'done');
          expectEvents(
            await waiting,
            range(last - 1, last + 3),
            `after ${last - 2}, live through ${last + 3}`,
            failures,
          );
        });
        // A log missing seqs 5 and 6 (compacted away, or lost with the power between two unsynced appends).
        const gapRoot = join(root, 'gap');
        writeLines(eventLogOf(gapRoot), [
          ...finishedRun(0, 'g1', '2026-06-19T03:14:07Z'),
          ...finishedRun(7, 'g2', '2026-06-19T03:15:07Z'),
        ]);
        await withAdapter(context, async (process) => {
          const client = liveClient(process, gapRoot, failures);
          expectEvents(await client.seqs(4), ['compacted@11'], 'after 4 in a log without seq 5', failures);
          expectEvents(await client.seqs(8), range(9, 11), 'after 8 in the same log', failures);
        });
        return failures;
      }),
  );
}

/** Records of the long log of `writer/live-catch-up`, and the bytes of each one's message. */
const LONG_LOG_RECORDS = 6000;
const LONG_LOG_MESSAGE_BYTES = 1000;

/**
 * `writer/live-catch-up`: a session opened on a log the harness wrote — 6,000 records, 6 MB, more than an in-memory
 * window of recent records holds by default — serves a cursor near the log's start from the log itself: a subscription
 * after seq 99 yields every record from 100 to the last, once and in order, with no `compacted` snapshot, because the
 * log holds them all (TJ-LIVE-012). The cost half of the rule (following the records after the cursor, not the log's
 * length) is measured by `pnpm bench`, not here.
 */
export async function catchUpCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-catch-up',
    'a cursor older than any in-memory window is served from the log: every record after it, no snapshot',
    'writer',
    ['TJ-LIVE-012', 'TJ-CONF-041'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const content = 'x'.repeat(LONG_LOG_MESSAGE_BYTES);
        const lines = Array.from(
          { length: LONG_LOG_RECORDS },
          (_, seq) =>
            `{"seq":${seq},"ts":"2026-06-19T03:14:07Z","type":"message_append","payload":{"message":{"role":"user","content":"${content}"}}}\n`,
        );
        mkdirSync(dirname(eventLogOf(root)), { recursive: true });
        writeFileSync(eventLogOf(root), lines.join(''));
        const last = LONG_LOG_RECORDS - 1;
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          const events = await client.seqs(99, { until_seq: last, timeout_ms: 30_000 });
          const snapshots = events.filter((e) => e.seq === undefined);
          if (snapshots.length > 0)
            failures.push(
              `a subscription after seq 99 yielded ${JSON.stringify(snapshots.slice(0, 3))}, though the log holds every record after it (TJ-LIVE-012)`,
            );
          const seqs = events.flatMap((e) => (typeof e.seq === 'number' ? [e.seq] : []));
          const wrong = seqs.findIndex((seq, i) => seq !== 100 + i);
          if (wrong >= 0 || seqs.length !== last - 99)
            failures.push(
              `a subscription after seq 99 yielded ${seqs.length} record(s)${wrong >= 0 ? `, seq ${seqs[wrong]} where ${100 + wrong} belongs` : ''}, not seqs 100..${last} in order`,
            );
        });
        return failures;
      }),
  );
}

/** Deltas of the burst of `writer/live-burst`, all sent before the first answer is awaited. */
const BURST_DELTAS = 3000;

/**
 * `writer/live-burst`: a subscriber reading live while the harness sends 3,000 deltas at once (pipelined, so that the
 * session takes many of them between two syncs and one commit delivers hundreds or thousands of records) gets every
 * record, consecutive, and no `cut_off`: a server decides a cut-off by the subscriber's own lag, not by the number of
 * records one commit delivers (TJ-LIVE-030). The harness cannot stall the server's disk, so it cannot make a commit
 * larger than a window it does not know: the check catches a cut-off by commit size only where commits of a burst are
 * larger than the server's window.
 */
export async function burstCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-burst',
    'a subscriber reading live is not cut off by a burst of deltas delivered together: every record, no cut_off',
    'writer',
    ['TJ-LIVE-030', 'TJ-CONF-041'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'count' }, 'send r1');
          const last = ((await client.ok('live_snapshot', {}, 'snapshot'))?.last_seq ?? -1) as number;
          // Each delta is a record (the first opens a segment; checkpoints may come between): seq last + BURST_DELTAS
          // is among the records of the burst, whatever else it holds.
          const through = last + BURST_DELTAS;
          const reading = client.seqs(last, { until_seq: through, timeout_ms: 60_000 });
          await Promise.all(
            Array.from({ length: BURST_DELTAS }, (_, i) => client.step('r1', 'delta', { text: `${i} ` })),
          );
          // Described by its first departure: thousands of seqs listed in full say nothing more.
          const got = describe(await reading);
          const expected = range(last + 1, through);
          const wrong = expected.findIndex((seq, i) => got[i] !== seq);
          if (wrong >= 0 || got.length !== expected.length)
            failures.push(
              `after ${last}, live through a burst of ${BURST_DELTAS} deltas: the subscription yielded ${got.length} event(s)${wrong >= 0 ? `, ${got[wrong] ?? 'nothing'} where ${expected[wrong]} belongs` : ''}, not seqs ${last + 1}..${through} (TJ-LIVE-030)`,
            );
          await client.step('r1', 'done');
        });
        return failures;
      }),
  );
}
