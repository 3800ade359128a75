import { closeSync, fdatasyncSync, mkdirSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { live } from '../lib/live.js';
import { gc, judge, median, nowMs, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';

type Hub = ReturnType<typeof live.openConversationHub>;
type Session = Awaited<ReturnType<Hub['session']>>;

const SESSION = 's1';

/**
 * Where the lines of an open journal end: its size less the pre-allocated space after its last line (spec §3.8; at
 * most 64 KiB, TJ-DUR-035), which a flushed live event log keeps, so the file size alone overstates what was written.
 */
function linesEnd(file: string): number {
  const size = statSync(file).size;
  const tail = Buffer.alloc(Math.min(size, 128 * 1024));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, tail, 0, tail.length, size - tail.length);
  } finally {
    closeSync(fd);
  }
  return size - tail.length + tail.lastIndexOf(0x0a) + 1;
}

/**
 * Writes a session's event log of about `bytes` through the writer (`none` mode, then one flush): finished runs of a
 * user message and 60 deltas of 4 KiB each, acknowledged, so that opening it recovers nothing. The file is the one the
 * hub opens for session `s1` under `root` (the store layout of spec §4.4).
 */
async function writeSessionLog(root: string, bytes: number): Promise<{ size: number; lastSeq: number }> {
  mkdirSync(join(root, SESSION), { recursive: true });
  const log = await writer.openEventLog({ root, sessionId: SESSION, durability: 'none', checkpointInterval: 1000 });
  const text = 'x'.repeat(4096);
  let written = 0;
  for (let r = 0; written < bytes; r += 1) {
    const requestId = `run-${r}`;
    log.chatStarted({ requestId, content: `question ${r}` });
    log.appendMessage({ role: 'user', content: `question ${r}`, id: `${requestId}.user` });
    log.segmentStarted({ requestId, messageId: `${requestId}.a1` });
    for (let d = 0; d < 60; d += 1) log.delta({ requestId, messageId: `${requestId}.a1`, text });
    log.chatDone({ requestId });
    const ack = await log.ack(requestId, { clientId: 'bench' });
    written = ack.offset + ack.length;
  }
  await log.flush();
  const lastSeq = log.lastSeq ?? -1;
  await log.close();
  return { size: statSync(join(root, SESSION, 'events.jsonl')).size, lastSeq };
}

/** Milliseconds from `subscribe({after})` to its first record. */
async function firstRecordMs(session: Session, after: number): Promise<number> {
  const begin = nowMs();
  const subscription = session.subscribe({ after });
  const next = await subscription.next();
  const ms = nowMs() - begin;
  subscription.close();
  if (next.done === true || next.value.kind !== 'record' || next.value.record.seq !== after + 1)
    throw new Error(`expected record ${after + 1}, got ${JSON.stringify(next.value).slice(0, 200)}`);
  return ms;
}

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
    const measure = async (root: string, bytes: number) => {
      const built = await writeSessionLog(root, bytes);
      gc();
      const hub = live.openConversationHub({ root, retention: false, ringRecords: 512 });
      const openBegin = nowMs();
      const session = await hub.session(SESSION);
      const openMs = nowMs() - openBegin;
      const head = session.durableSeq;
      const disk: number[] = [];
      await firstRecordMs(session, head - 100);
      for (let i = 0; i < samples; i += 1) disk.push(await firstRecordMs(session, head - 100));
      await hub.close();
      return { ...built, openMs, disk: median(disk), diskP90: quantile(disk, 0.9) };
    };
    const small = await measure(join(context.workDir, 'small'), 1e6);
    const big = await measure(join(context.workDir, 'big'), bigBytes);

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
      `  first record from the log: ${big.disk.toFixed(3)} ms on ${mb(big.size)} vs ${small.disk.toFixed(3)} ms on ${mb(small.size)}; from the window ${ringMs.toFixed(4)} ms; session open ${big.openMs.toFixed(1)} ms vs ${small.openMs.toFixed(1)} ms`,
    );
    const verdict = judge(big.disk / small.disk, 'lower', 1.5);
    return [
      {
        id: 'live-reconnect-disk',
        name: `live reconnect, subscribe(after: lastSeq-100) to first record, ${mb(big.size)} log`,
        value: round(big.disk),
        unit: 'ms',
        floor: round(small.disk),
        floorUnit: `ms on a ${mb(small.size)} log`,
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 1.5',
        ...verdict,
        status: 'measured',
        note: `median of ${samples} subscribes after one warm-up, read from the log by bisection on seq (window empty after open); p90 ${round(big.diskP90, 3)} ms vs ${round(small.diskP90, 3)} ms`,
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

/**
 * Streaming cost (issue 15): the amortised cost of one delta through the hub (`run.delta` awaited, the 20 ms group
 * commit included, then the final flush) against a raw buffered append of the same bytes (`writeSync` of each line on
 * an `O_APPEND` file, one `fdatasync` at the end), in rounds alternated after an untimed warm-up round of each, as the
 * other throughput figures are (a single cold round mostly measured the compiler warming up): target ≤ 2×. And one committed message through the hub
 * (`run.toolResult`: `tool.result` and its `message_append`, durable before it resolves) against the durable append
 * floor (`writeSync` of the same bytes + `fdatasyncSync`): target ≤ 1.2×.
 */
export const liveStreamCost: Figure = {
  id: 'live-stream-cost',
  title: 'live per-delta cost vs raw buffered append; per committed message vs durable append floor',
  async run(context): Promise<FigureRow[]> {
    const deltas = context.mode === 'quick' ? 2000 : 20000;
    const rounds = context.mode === 'quick' ? 3 : 5;
    const messages = context.mode === 'quick' ? 100 : 600;
    const hub = live.openConversationHub({ root: join(context.workDir, 'stream'), retention: false });
    const session = await hub.session(SESSION);
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    const text = 'tok '.repeat(4);
    const file = join(context.workDir, 'stream', SESSION, 'events.jsonl');
    // One round of the subject: `deltas` awaited deltas and the flush that makes them durable.
    const hubRound = async (): Promise<{ ms: number; bytes: number }> => {
      await session.flush();
      const sizeBefore = linesEnd(file);
      gc();
      const begin = nowMs();
      for (let d = 0; d < deltas; d += 1) await sent.run.delta(text);
      await session.flush();
      return { ms: nowMs() - begin, bytes: linesEnd(file) - sizeBefore };
    };
    // The harness's method (BENCHMARKS.md): an untimed warm-up round of each, then rounds alternated, medians.
    const warm = await hubRound();
    const lineBytes = Math.round(warm.bytes / deltas);
    const fd = openSync(join(context.workDir, 'delta-floor.jsonl'), 'a');
    const line = Buffer.alloc(lineBytes, 0x61);
    line[line.length - 1] = 0x0a;
    const floorRound = (): number => {
      gc();
      const begin = nowMs();
      for (let d = 0; d < deltas; d += 1) writeSync(fd, line);
      fdatasyncSync(fd);
      return nowMs() - begin;
    };
    floorRound();
    const hubRounds: number[] = [];
    const floorRounds: number[] = [];
    try {
      for (let r = 0; r < rounds; r += 1) {
        hubRounds.push((await hubRound()).ms);
        floorRounds.push(floorRound());
      }
    } finally {
      closeSync(fd);
    }
    const hubMs = median(hubRounds);
    const floorMs = median(floorRounds);

    // Committed messages: one tool result each, awaited, alternated with the durable floor of the same bytes.
    const messageFloor = join(context.workDir, 'message-floor.jsonl');
    const committed = await committedMessages(sent.run, file, messageFloor, messages);
    const { subject, floor, messageBytes } = committed;
    await sent.run.done();
    await hub.close();

    // The same with the writer's opt-in blocking sync (`blockingSyncFileSystem`): the sync runs on the calling thread,
    // without the thread-pool round trip, at the price of blocking the event loop for it. Absent from older builds.
    const blockingFs = (writer as { blockingSyncFileSystem?: typeof writer.nodeFileSystem }).blockingSyncFileSystem;
    let blocking: CommittedMessages | null = null;
    if (blockingFs !== undefined) {
      const blockingHub = live.openConversationHub({
        root: join(context.workDir, 'stream-blocking'),
        retention: false,
        fs: blockingFs,
      });
      const blockingSession = await blockingHub.session(SESSION);
      const blockingSent = await blockingSession.send({ requestId: 'r1', content: 'hi' });
      if (!blockingSent.created) throw new Error('expected a new run');
      const blockingFile = join(context.workDir, 'stream-blocking', SESSION, 'events.jsonl');
      blocking = await committedMessages(blockingSent.run, blockingFile, messageFloor, messages);
      await blockingSent.run.done();
      await blockingHub.close();
    }

    const perDelta = (hubMs * 1000) / deltas;
    const perFloor = (floorMs * 1000) / deltas;
    const m50 = median(subject);
    const f50 = median(floor);
    context.log(
      `  per delta: hub ${perDelta.toFixed(2)} µs vs raw ${perFloor.toFixed(2)} µs (${lineBytes} B); per committed message: hub ${m50.toFixed(3)} ms vs durable floor ${f50.toFixed(3)} ms (${messageBytes} B)`,
    );
    return [
      {
        id: 'live-delta-cost',
        name: `live amortised cost per delta through the hub (${lineBytes}-byte chat.delta)`,
        value: round(perDelta),
        unit: 'µs',
        floor: round(perFloor),
        ratioDefinition: 'value / floor (cost); lower is better',
        direction: 'lower',
        target: 'ratio <= 2',
        ...judge(perDelta / perFloor, 'lower', 2),
        status: 'measured',
        note: `rounds of ${deltas} run.delta() awaited one at a time + the flush (20 ms group commit in between), vs writeSync of the same line per delta + one fdatasync; medians of ${rounds} alternated rounds after an untimed warm-up round of each (the first round: ${round((warm.ms * 1000) / deltas)} µs per delta)`,
        details: {
          deltas,
          rounds,
          lineBytes,
          hubMs: round(hubMs),
          floorMs: round(floorMs),
          hubRoundsMs: hubRounds.map((ms) => round(ms)),
          floorRoundsMs: floorRounds.map((ms) => round(ms)),
          warmUpHubMs: round(warm.ms),
        },
      },
      messageRow(committed, messages, {
        id: 'live-message-cost',
        name: `live committed message through the hub, median (tool.result + message_append, ${messageBytes} B)`,
        note: `${messages} run.toolResult() awaited one at a time, alternated with writeSync of the same bytes + fdatasyncSync`,
      }),
      ...(blocking === null
        ? []
        : [
            messageRow(blocking, messages, {
              id: 'live-message-cost-blocking-sync',
              name: `live committed message through the hub on blockingSyncFileSystem (opt-in), median (${blocking.messageBytes} B)`,
              note: "as the row above, with the hub's event logs syncing on the calling thread (the event loop waits for each sync)",
            }),
          ]),
    ];
  },
};

interface CommittedMessages {
  readonly subject: number[];
  readonly floor: number[];
  readonly messageBytes: number;
}

/**
 * `messages` awaited `run.toolResult()` calls (after 10 untimed), each followed by the durable floor of the bytes it
 * added to `file` (`writeSync` + `fdatasyncSync` to `floorPath`), alternated, so both see the same disk.
 */
async function committedMessages(
  run: { toolResult(input: { toolCallId: string; output: string }): Promise<void> },
  file: string,
  floorPath: string,
  messages: number,
): Promise<CommittedMessages> {
  const messageFd = openSync(floorPath, 'a');
  const subject: number[] = [];
  const floor: number[] = [];
  let messageBytes = 0;
  try {
    for (let i = 0; i < messages + 10; i += 1) {
      const before = linesEnd(file);
      const begin = nowMs();
      await run.toolResult({ toolCallId: `c${i}`, output: `result ${i}: ${'y'.repeat(200)}` });
      const s = nowMs() - begin;
      messageBytes = linesEnd(file) - before;
      const bytes = Buffer.alloc(messageBytes, 0x61);
      bytes[bytes.length - 1] = 0x0a;
      const floorStart = nowMs();
      writeSync(messageFd, bytes);
      fdatasyncSync(messageFd);
      const f = nowMs() - floorStart;
      if (i >= 10) {
        subject.push(s);
        floor.push(f);
      }
    }
  } finally {
    closeSync(messageFd);
  }
  return { subject, floor, messageBytes };
}

/** The row of a series of committed messages: the median against the floor's, and both p99s. */
function messageRow(
  { subject, floor, messageBytes }: CommittedMessages,
  messages: number,
  row: { readonly id: string; readonly name: string; readonly note: string },
): FigureRow {
  const m50 = median(subject);
  const f50 = median(floor);
  return {
    id: row.id,
    name: row.name,
    value: round(m50),
    unit: 'ms',
    floor: round(f50),
    ratioDefinition: 'value / floor (latency); lower is better',
    direction: 'lower',
    target: 'ratio <= 1.2',
    ...judge(m50 / f50, 'lower', 1.2),
    status: 'measured',
    note: `${row.note}; p99 ${round(quantile(subject, 0.99), 3)} ms`,
    details: {
      messages,
      messageBytes,
      p99Ms: round(quantile(subject, 0.99)),
      floorP99Ms: round(quantile(floor, 0.99)),
    },
  };
}
