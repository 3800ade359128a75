import { join } from 'node:path';
import { live } from '../lib/live.js';
import { ShuffledSamples } from '../lib/order.js';
import { firstRecordMs, writeSessionLog } from '../lib/replay.js';
import { gc, judge, median, nowMs, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';

const SESSION = 's1';

/** A session log of about `bytes`: runs of 60 deltas of 4 KiB each. */
const bigDeltas = (bytes: number) => ({ deltaText: 'x'.repeat(4096), deltasPerRun: 60, bytes });

/**
 * Reconnect (issue 15): `subscribe({after: lastSeq - 100})` to its first record on a ~200 MB log against the same on a
 * ~1 MB log, served from the log (the hub's window is empty after opening) — O(tail) means the ratio stays near 1 —
 * and from the in-memory window. Also reports the time to open each session (the checkpoint run index, TJ-EVENT-020).
 */
export const liveReconnect: Figure = {
  id: 'live-reconnect',
  title: 'live subscribe({after: lastSeq-100}) first record: 200 MB log vs 1 MB log, and from the window',
  async run(context): Promise<FigureRow[]> {
    const bigBytes = context.mode === 'quick' ? 50e6 : 200e6;
    const samples = context.mode === 'quick' ? 15 : 41;
    const open = async (root: string, bytes: number) => {
      const built = await writeSessionLog(root, SESSION, bigDeltas(bytes));
      gc();
      const hub = live.openConversationHub({ root, retention: false, ringRecords: 512 });
      const openBegin = nowMs();
      const session = await hub.session(SESSION);
      const openMs = nowMs() - openBegin;
      const head = session.durableSeq;
      await firstRecordMs(session, head - 100);
      return { ...built, hub, session, head, openMs, disk: [] as number[] };
    };
    const small = await open(join(context.workDir, 'small'), 1e6);
    const big = await open(join(context.workDir, 'big'), bigBytes);
    // Both sessions open at once, one sample of each per round in a shuffled order (`ShuffledSamples`): measured one
    // log after the other, the disk's and the page cache's drift between the two series moved the ratio well away
    // from 1, either way (bench/results/history.md, "Figures that were in code comments").
    const shuffled = new ShuffledSamples(2);
    try {
      for (let i = 0; i < samples; i += 1)
        await shuffled.sample([
          async () => small.disk.push(await firstRecordMs(small.session, small.head - 100)),
          async () => big.disk.push(await firstRecordMs(big.session, big.head - 100)),
        ]);
    } finally {
      await small.hub.close();
      await big.hub.close();
    }
    const smallMs = median(small.disk);
    const bigMs = median(big.disk);

    // From the window: a live session that just streamed 300 deltas holds them in memory.
    const hub = live.openConversationHub({ root: join(context.workDir, 'ring'), retention: false, ringRecords: 1024 });
    const session = await hub.session(SESSION);
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    for (let d = 0; d < 300; d += 1) await sent.run.delta(`token ${d} `);
    await session.flush();
    const ring: number[] = [];
    for (let i = 0; i < samples; i += 1) ring.push(await firstRecordMs(session, session.durableSeq - 100));
    await sent.run.done();
    await hub.close();
    const ringMs = median(ring);

    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    context.log(
      `  first record from the log: ${bigMs.toFixed(3)} ms on ${mb(big.size)} vs ${smallMs.toFixed(3)} ms on ${mb(small.size)}; from the window ${ringMs.toFixed(4)} ms; session open ${big.openMs.toFixed(1)} ms vs ${small.openMs.toFixed(1)} ms`,
    );
    const verdict = judge(bigMs / smallMs, 'lower', 1.5);
    return [
      {
        id: 'live-reconnect-disk',
        name: `live reconnect, subscribe(after: lastSeq-100) to first record, ${mb(big.size)} log`,
        value: round(bigMs),
        unit: 'ms',
        floor: round(smallMs),
        floorUnit: `ms on a ${mb(small.size)} log`,
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 1.5',
        ...verdict,
        status: 'measured',
        note: `median of ${samples} subscribes to each log after one warm-up, the two logs sampled in a shuffled order, read from the log by bisection on seq (window empty after open); p90 ${round(quantile(big.disk, 0.9), 3)} ms vs ${round(quantile(small.disk, 0.9), 3)} ms`,
        details: { bigBytes: big.size, smallBytes: small.size, bigLastSeq: big.lastSeq, samples },
      },
      {
        id: 'live-reconnect-ring',
        name: 'live reconnect from the in-memory window, subscribe(after: head-100) to first record',
        value: round(ringMs),
        unit: 'ms',
        floor: null,
        ratio: null,
        direction: 'lower',
        target: 'none (reported)',
        met: null,
        status: 'info',
        note: `median of ${samples} subscribes on a session that just streamed 300 deltas (window of 1024 records)`,
      },
      {
        id: 'live-session-open',
        name: `live session open (hub.session) on a ${mb(big.size)} log`,
        value: round(big.openMs),
        unit: 'ms',
        floor: round(small.openMs),
        floorUnit: `ms on a ${mb(small.size)} log`,
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(big.openMs / small.openMs, 3),
        met: null,
        status: 'info',
        note: 'one open each, cold hub; reads the tail to the last checkpoint and its run index (TJ-EVENT-020)',
      },
    ];
  },
};

/**
 * Fan-out (issue 15): 1,000 subscribers on one session, each draining with `for await`; the run streams deltas and
 * the figure is the records delivered per second to all of them together, from the first delta until every
 * subscriber holds the last one. Memory per idle subscriber: heap growth after attaching 1,000 subscribers that wait
 * for the next record, divided by 1,000.
 */
export const liveFanout: Figure = {
  id: 'live-fanout',
  title: 'live fan-out: 1,000 subscribers on one session, deliveries/s and memory per idle subscriber',
  async run(context): Promise<FigureRow[]> {
    const subscribers = 1000;
    const deltas = context.mode === 'quick' ? 300 : 2000;
    const hub = live.openConversationHub({ root: join(context.workDir, 'fanout'), retention: false });
    const session = await hub.session(SESSION);
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await session.flush();
    const start = session.durableSeq;
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const subs = Array.from({ length: subscribers }, () => session.subscribe({ after: start }));
    let received = 0;
    let target = Number.POSITIVE_INFINITY;
    let allDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    let finished = 0;
    const loops = subs.map(async (subscription) => {
      for await (const event of subscription) {
        if (event.kind !== 'record') break;
        received += 1;
        if (event.record.seq >= target) break;
      }
      finished += 1;
      if (finished === subscribers) allDone();
    });
    // Let every subscriber reach its wait, then measure the idle heap.
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc();
    const perIdle = (process.memoryUsage().heapUsed - heapBefore) / subscribers;

    const begin = nowMs();
    for (let d = 0; d < deltas; d += 1) await sent.run.delta(`token ${d} `);
    await session.flush();
    target = session.durableSeq;
    await done;
    const seconds = (nowMs() - begin) / 1000;
    await Promise.all(loops);
    await sent.run.done();
    await hub.close();
    const perSecond = received / seconds;
    context.log(
      `  ${subscribers} subscribers: ${received} deliveries in ${seconds.toFixed(2)} s = ${Math.round(perSecond)}/s; ${Math.round(perIdle)} B per idle subscriber`,
    );
    return [
      {
        id: 'live-fanout-deliveries',
        name: `live fan-out, records delivered per second to ${subscribers} subscribers`,
        value: round(perSecond),
        unit: 'records/s',
        floor: null,
        ratio: null,
        direction: 'higher',
        target: 'none (reported)',
        met: null,
        status: 'info',
        note: `${deltas} deltas (each also a segment/checkpoint record now and then), 20 ms group commit; ${received} deliveries in ${round(seconds, 3)} s`,
        details: { subscribers, deltas, received, seconds: round(seconds) },
      },
      {
        id: 'live-fanout-idle-memory',
        name: 'live memory per idle subscriber (heap)',
        value: round(perIdle),
        unit: 'B',
        floor: null,
        ratio: null,
        direction: 'lower',
        target: 'none (reported)',
        met: null,
        status: 'info',
        note: `heap growth after attaching ${subscribers} waiting subscribers (after gc), divided by ${subscribers}`,
      },
    ];
  },
};
