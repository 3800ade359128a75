import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { deltaRecord } from '../lib/floors.js';
import { alternate, median, nowMs, round, throughputRow } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';

/** Appends kept in flight at once by the subject: each new append waits for the one this many places before it. */
const WINDOW = 256;

/**
 * Non-durable (`none`) append throughput of the writer: `AppendFile.open(path, { durability: 'none' })` and
 * `appendRecord` in a loop with at most {@link WINDOW} appends in flight (the writer writes what is queued while a
 * write is in flight with one `write`), timed until the last append is acknowledged (handed to the OS, as the floor's
 * `writeSync` is); `close()`, which fsyncs the file in `none` mode, is timed separately and reported, not counted,
 * because the floor never syncs. Floor: a raw `JSON.stringify` + `writeSync` loop of the same records. Subject and
 * floor run alternately. Also reported: the same loop awaiting every append (one in flight).
 */
export const appendNone: Figure = {
  id: 'append-none',
  title: 'non-durable append throughput vs raw JSON.stringify + writeSync',
  async run(context): Promise<FigureRow[]> {
    const records = context.mode === 'quick' ? 50_000 : 300_000;
    const runs = context.mode === 'quick' ? 3 : 5;
    const values = Array.from({ length: records }, (_, i) => deltaRecord(i));
    let bytes = 0;
    let file = 0;
    const floor = () => {
      const fd = openSync(join(context.workDir, `none-floor-${file++}.jsonl`), 'a');
      for (const value of values) bytes += writeSync(fd, `${JSON.stringify(value)}\n`);
      closeSync(fd);
    };
    const closeMs: number[] = [];
    const subject = async (window: number, count: number) => {
      const journal = await writer.AppendFile.open(join(context.workDir, `none-writer-${file++}.jsonl`), {
        durability: 'none',
      });
      const start = nowMs();
      const inFlight: Promise<unknown>[] = new Array(window);
      for (let i = 0; i < count; i += 1) {
        const slot = i % window;
        if (i >= window) await inFlight[slot];
        inFlight[slot] = journal.appendRecord(values[i]);
      }
      await Promise.all(inFlight);
      const ms = nowMs() - start;
      const t = nowMs();
      await journal.close();
      closeMs.push(nowMs() - t);
      return ms;
    };
    // alternate() times each call, including the floor's open and close and the subject's close: time inside instead.
    const windowed: number[] = [];
    const floorTimes: number[] = [];
    const timedFloor = () => {
      const start = nowMs();
      floor();
      floorTimes.push(nowMs() - start);
    };
    await alternate(runs, async () => windowed.push(await subject(WINDOW, records)), timedFloor);
    // One append in flight costs a thread-pool round trip per record: a tenth of the records is enough to show it.
    const awaitedRecords = records / 10;
    const awaited: number[] = [];
    const awaitedRuns = context.mode === 'quick' ? 1 : 3;
    await alternate(
      awaitedRuns,
      async () => awaited.push(await subject(1, awaitedRecords)),
      () => undefined,
    );
    // The first sample of each is the untimed warm-up of alternate().
    const subjectMs = median(windowed.slice(1));
    const floorMs = median(floorTimes.slice(1));
    const awaitedMs = median(awaited.slice(1));
    const value = records / (subjectMs / 1000);
    const throughput = records / (floorMs / 1000);
    const oneAtATime = awaitedRecords / (awaitedMs / 1000);
    const lineBytes = Math.round(bytes / floorTimes.length / records);
    context.log(
      `  raw JSON.stringify + writeSync: ${throughput.toFixed(0)} records/s; AppendFile none (${WINDOW} in flight): ` +
        `${value.toFixed(0)} records/s; awaiting each: ${oneAtATime.toFixed(0)} records/s`,
    );
    return [
      throughputRow({
        id: 'append-none',
        name: 'non-durable append throughput (none mode)',
        unit: 'records/s',
        value,
        floor: throughput,
        minRatio: 0.7,
        note:
          `AppendFile none, appendRecord with up to ${WINDOW} in flight, until the last ack; floor: ${records} chat.delta ` +
          `records (${lineBytes} B), one writeSync each; medians of ${runs} alternated runs; close() (fsync) ` +
          `${round(median(closeMs), 3)} ms median, not counted`,
        details: {
          records,
          runs,
          window: WINDOW,
          subjectMs: windowed.slice(1).map((s) => round(s)),
          floorMs: floorTimes.slice(1).map((s) => round(s)),
          closeMs: closeMs.map((s) => round(s)),
        },
      }),
      throughputRow({
        id: 'append-none-awaited',
        name: 'non-durable append throughput, awaiting each append',
        unit: 'records/s',
        value: oneAtATime,
        floor: throughput,
        note: `the same loop with one append in flight (await each), ${awaitedRecords} records: one thread-pool write per record; median of ${awaitedRuns}`,
        details: { records: awaitedRecords, runs: awaitedRuns, subjectMs: awaited.slice(1).map((s) => round(s)) },
      }),
    ];
  },
};
