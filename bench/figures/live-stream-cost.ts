import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import {
  FULL_WARM_UP,
  linesEnd,
  openFloorFile,
  QUICK_WARM_UP,
  sampleCommittedMessages,
} from '../lib/committed-messages.js';
import { live } from '../lib/live.js';
import { gc, judge, latencyInfoRow, median, nowMs, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';

const SESSION = 's1';

/**
 * Streaming cost (issue 15): the amortised cost of one delta through the hub (`run.delta` awaited, the 20 ms group
 * commit included, then the final flush) against a raw buffered append of the same bytes (`writeSync` of each line on
 * an `O_APPEND` file, one `fdatasync` at the end), in rounds alternated after an untimed warm-up round of each, as the
 * other throughput figures are (a single cold round mostly measured the compiler warming up): target ≤ 2×. And one
 * committed message through the hub (`run.toolResult`: `tool.result` and its `message_append`, durable before it
 * resolves) against the durable append floor (`writeSync` of the same bytes + `fdatasyncSync`), one sample of each per
 * message in a shuffled order: target ≤ 1.2×. An information row gives the non-blocking floor of the same bytes
 * (`writeSync`, then `fdatasync` through libuv's thread pool, awaited), in the same shuffled loop: what any writer that does not block the event loop for its sync pays before doing anything, and the hub ÷ it.
 */
export const liveStreamCost: Figure = {
  id: 'live-stream-cost',
  title: 'live per-delta cost vs raw buffered append; per committed message vs durable append floor',
  async run(context): Promise<FigureRow[]> {
    const deltas = context.mode === 'quick' ? 2000 : 20000;
    const rounds = context.mode === 'quick' ? 3 : 5;
    const messages = context.mode === 'quick' ? 100 : 600;
    const warmUp = context.mode === 'quick' ? QUICK_WARM_UP : FULL_WARM_UP;
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

    // Committed messages: one tool result each, awaited, sampled with the durable floor of the same bytes.
    const messageFloor = join(context.workDir, 'message-floor.jsonl');
    const asyncFloorPath = join(context.workDir, 'message-async-floor.jsonl');
    const committed = await committedMessages(sent.run, file, messageFloor, messages, warmUp, asyncFloorPath);
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
      blocking = await committedMessages(blockingSent.run, blockingFile, messageFloor, messages, warmUp);
      await blockingSent.run.done();
      await blockingHub.close();
    }

    const perDelta = (hubMs * 1000) / deltas;
    const perFloor = (floorMs * 1000) / deltas;
    const m50 = median(subject);
    const f50 = median(floor);
    const a50 = median(committed.asyncFloor);
    context.log(
      `  per delta: hub ${perDelta.toFixed(2)} µs vs raw ${perFloor.toFixed(2)} µs (${lineBytes} B); per committed message: hub ${m50.toFixed(3)} ms vs durable floor ${f50.toFixed(3)} ms, non-blocking floor ${a50.toFixed(3)} ms (${messageBytes} B)`,
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
        note: `${messages} run.toolResult() awaited one at a time, after ${warmUp} untimed ones, each sampled in a shuffled order with writeSync of the same bytes + fdatasyncSync (and with the non-blocking floor of the last row)`,
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
      latencyInfoRow({
        id: 'live-message-cost-async-floor',
        name: `raw append of the same ${messageBytes} B + fdatasync through the thread pool (non-blocking floor), median`,
        value: a50,
        floor: f50,
        note: `writeSync, then fdatasync through libuv's thread pool, awaited, sampled in the same shuffled loop as the committed-message row: what no non-blocking durable append can beat; the hub = ${round(m50 / a50, 2)} × this`,
        details: {
          messages,
          messageBytes,
          hubOverThisFloor: round(m50 / a50, 3),
          p99Ms: round(quantile(committed.asyncFloor, 0.99)),
        },
      }),
    ];
  },
};

interface CommittedMessages {
  readonly subject: number[];
  readonly floor: number[];
  /** The non-blocking floor's samples; empty when it was not measured. */
  readonly asyncFloor: number[];
  readonly messageBytes: number;
}

/**
 * `messages` awaited `run.toolResult()` calls after `warmUp` untimed ones, each sampled with the durable floor of the bytes a message adds to
 * `file` (`writeSync` + `fdatasyncSync` to `floorPath`) in a shuffled order, so both see the same disk. With
 * `asyncFloorPath`, the non-blocking floor of those bytes joins the shuffle: `writeSync`, then `fdatasync` through
 * libuv's thread pool, awaited (as `durable-submit-async-floor` measures it for a turn record).
 */
async function committedMessages(
  run: { toolResult(input: { toolCallId: string; output: string }): Promise<void> },
  file: string,
  floorPath: string,
  messages: number,
  warmUp: number,
  asyncFloorPath?: string,
): Promise<CommittedMessages> {
  const durable = openFloorFile(floorPath);
  const nonBlocking = asyncFloorPath === undefined ? undefined : openFloorFile(asyncFloorPath);
  try {
    const others = nonBlocking === undefined ? [durable.durable] : [durable.durable, nonBlocking.nonBlocking];
    const sampled = await sampleCommittedMessages(run, file, messages, others, warmUp);
    const [floor = [], asyncFloor = []] = sampled.others;
    return { subject: sampled.hub, floor, asyncFloor, messageBytes: sampled.messageBytes };
  } finally {
    durable.close();
    nonBlocking?.close();
  }
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
