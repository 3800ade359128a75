import { closeSync, fdatasync, fdatasyncSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { submittedRecord } from '../lib/floors.js';
import { judge, median, nowMs, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';

const SESSION = 'conv-bench0005';

/**
 * Durable `submit` latency of the writer (`openTurnJournal` in `every` mode, one `submit({ content, turnId })` at a
 * time, a new turn id each) against the floor: a raw `writeSync` of the same ~400-byte line on an `O_APPEND` file
 * followed by `fdatasyncSync`. Subject and floor samples alternate one by one on two files in the same directory, so
 * drift in the disk falls on both. The journal's clock is pinned so that its records are byte for byte the floor's.
 * A second, information-only series submits without a turn id (the writer generates one), which skips the check of
 * the session's other shards that a caller-supplied id triggers. A third series is the floor of any non-blocking
 * durable append in Node.js: the same raw `writeSync`, then `fdatasync` through libuv's thread pool (one trip there
 * and back), awaited; it shows how much of the gap is the asynchronous sync itself and how much is the library.
 */
export const durableSubmit: Figure = {
  id: 'durable-submit',
  title: 'durable submit latency vs raw writeSync + fdatasyncSync',
  async run(context): Promise<FigureRow[]> {
    const samples = context.mode === 'quick' ? 200 : 2000;
    const warmup = 20;
    const total = samples + warmup;
    const floorFile = join(context.workDir, 'durable-floor.jsonl');
    const records = Array.from({ length: total }, (_, i) => submittedRecord(i));
    const lines = records.map((r) => Buffer.from(`${JSON.stringify(r)}\n`));
    let clockIndex = 0;
    const clock = () => Math.round(((records[clockIndex]?.created_at as number) ?? 0) * 1000);
    const open = (dir: string) =>
      writer.openTurnJournal({ dir: join(context.workDir, dir), sessionId: SESSION, durability: 'every', clock });
    const journal = await open('_turn_journal');
    const generated = await open('_turn_journal_generated');
    const fd = openSync(floorFile, 'a');
    const asyncFd = openSync(join(context.workDir, 'durable-async-floor.jsonl'), 'a');
    const asyncSync = () =>
      new Promise<void>((resolve, reject) => fdatasync(asyncFd, (error) => (error ? reject(error) : resolve())));
    const asyncFloor: number[] = [];
    const floor: number[] = [];
    const subject: number[] = [];
    const noId: number[] = [];
    try {
      for (let i = 0; i < total; i += 1) {
        const record = records[i] as Record<string, unknown>;
        const input = {
          content: record.content as string,
          streamId: record.stream_id as string,
          workspace: record.workspace as string,
          model: record.model as string,
          modelProvider: record.model_provider as string,
        };
        let start = nowMs();
        writeSync(fd, lines[i] as Buffer);
        fdatasyncSync(fd);
        const f = nowMs() - start;
        start = nowMs();
        writeSync(asyncFd, lines[i] as Buffer);
        await asyncSync();
        const a = nowMs() - start;
        clockIndex = i;
        start = nowMs();
        await journal.submit({ ...input, turnId: record.turn_id as string });
        const s = nowMs() - start;
        start = nowMs();
        await generated.submit(input);
        const g = nowMs() - start;
        if (i >= warmup) {
          floor.push(f);
          asyncFloor.push(a);
          subject.push(s);
          noId.push(g);
        }
      }
    } finally {
      closeSync(fd);
      closeSync(asyncFd);
      await journal.close();
      await generated.close();
    }
    const floorBytes = statSync(floorFile).size;
    const subjectBytes = statSync(journal.path).size;
    if (floorBytes !== subjectBytes)
      throw new Error(`submit wrote ${subjectBytes} bytes, the floor ${floorBytes}: the records differ`);
    const f50 = median(floor);
    const f99 = quantile(floor, 0.99);
    const s50 = median(subject);
    const s99 = quantile(subject, 0.99);
    const g50 = median(noId);
    const g99 = quantile(noId, 0.99);
    const a50 = median(asyncFloor);
    const recordBytes = lines[0]?.length ?? 0;
    context.log(
      `  raw append + fdatasync of ${recordBytes} B: median ${f50.toFixed(3)} ms, p99 ${f99.toFixed(3)} ms; ` +
        `submit: median ${s50.toFixed(3)} ms, p99 ${s99.toFixed(3)} ms; without turnId: median ${g50.toFixed(3)} ms; ` +
        `raw append + fdatasync through the thread pool: median ${a50.toFixed(3)} ms`,
    );
    const details = {
      samples,
      recordBytes,
      warmup,
      bytesWritten: subjectBytes,
      submitMedianMs: round(s50),
      submitP99Ms: round(s99),
      submitMeanMs: round(subject.reduce((a, b) => a + b, 0) / samples),
      floorMeanMs: round(floor.reduce((a, b) => a + b, 0) / samples),
      generatedIdMedianMs: round(g50),
      generatedIdP99Ms: round(g99),
      asyncFloorMedianMs: round(a50),
      asyncFloorP99Ms: round(quantile(asyncFloor, 0.99)),
    };
    const how = `openTurnJournal every mode, submit({ content, turnId }) awaited one at a time, alternated sample by sample with the floor (writeSync + fdatasyncSync, O_APPEND); ${samples} samples each after ${warmup} warm-up`;
    return [
      {
        id: 'durable-submit-median',
        name: `durable submit latency, median (${recordBytes}-byte submitted)`,
        value: round(s50),
        unit: 'ms',
        floor: round(f50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 1.15',
        ...judge(s50 / f50, 'lower', 1.15),
        status: 'measured',
        note: how,
        details,
      },
      {
        id: 'durable-submit-p99',
        name: 'durable submit latency, p99',
        value: round(s99),
        unit: 'ms',
        floor: round(f99),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(s99 / f99, 3),
        met: null,
        status: 'info',
        note: `p99 of the same ${samples} samples`,
        details,
      },
      {
        id: 'durable-submit-generated-id',
        name: 'durable submit latency, median, without turnId (id generated)',
        value: round(g50),
        unit: 'ms',
        floor: round(f50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(g50 / f50, 3),
        met: null,
        status: 'info',
        note: `submit({ content }) on a second journal in the same loop: no check of the session's other shards (p99 ${round(g99, 3)} ms)`,
        details: { samples },
      },
      {
        id: 'durable-submit-async-floor',
        name: 'raw append + fdatasync through the thread pool (non-blocking floor), median',
        value: round(a50),
        unit: 'ms',
        floor: round(f50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(a50 / f50, 3),
        met: null,
        status: 'info',
        note: `writeSync, then fdatasync through libuv's thread pool, awaited: what no non-blocking durable append can beat; submit = ${round(s50 / a50, 2)} × this`,
        details: { samples },
      },
    ];
  },
};
