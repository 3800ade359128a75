import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ShuffledSamples } from '../lib/order.js';
import { median, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';

/**
 * Durable event-log append latency (issue 11): `openEventLog` in `every` mode, one `appendMessage` awaited at a time,
 * against the floor of a raw `writeSync` of a line of the same size on an `O_APPEND` file followed by
 * `fdatasyncSync`. Each record gives one sample of each, in a shuffled order (`ShuffledSamples`), so drift in the
 * disk and the place in the loop fall on both. No figure measured event-log
 * appends before, which is how a lost single-trip small write (the hint that an acknowledgement awaits the write) went unnoticed. Automatic
 * checkpoints are pushed out of the sample (interval above the sample count), so every sample is one record.
 */
export const eventAppend: Figure = {
  id: 'event-append',
  title: 'durable event-log append latency vs raw writeSync + fdatasyncSync',
  async run(context): Promise<FigureRow[]> {
    const samples = context.mode === 'quick' ? 200 : 2000;
    const warmup = 20;
    const total = samples + warmup;
    const log = await writer.openEventLog({
      file: join(context.workDir, 'events.jsonl'),
      durability: 'every',
      checkpointInterval: total + 1,
    });
    const fd = openSync(join(context.workDir, 'event-floor.jsonl'), 'a');
    const floor: number[] = [];
    const subject: number[] = [];
    let recordBytes = 0;
    // The floor writes as many bytes as the subject's last record: its own when it runs second, the previous one's
    // (at most a digit shorter) when the shuffled order puts it first.
    let floorLine = Buffer.alloc(0);
    const shuffled = new ShuffledSamples(2);
    try {
      for (let i = 0; i < total; i += 1) {
        const message = { role: 'assistant', content: `answer ${i}: ${'x'.repeat(200)}` };
        const [s, f] = (await shuffled.sample([
          async () => {
            const ack = await log.appendMessage(message);
            recordBytes = ack.length;
            if (floorLine.length !== ack.length) {
              floorLine = Buffer.alloc(ack.length, 0x61);
              floorLine[floorLine.length - 1] = 0x0a;
            }
          },
          () => {
            if (floorLine.length === 0) return;
            writeSync(fd, floorLine);
            fdatasyncSync(fd);
          },
        ])) as [number, number];
        if (i >= warmup) {
          subject.push(s);
          floor.push(f);
        }
      }
    } finally {
      closeSync(fd);
      await log.close();
    }
    const s50 = median(subject);
    const f50 = median(floor);
    const s99 = quantile(subject, 0.99);
    context.log(
      `  event-log append of ${recordBytes} B: median ${s50.toFixed(3)} ms, p99 ${s99.toFixed(3)} ms; ` +
        `raw append + fdatasync: median ${f50.toFixed(3)} ms`,
    );
    return [
      {
        id: 'event-append-median',
        name: `durable event-log append latency, median (${recordBytes}-byte message_append)`,
        value: round(s50),
        unit: 'ms',
        floor: round(f50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(s50 / f50, 3),
        met: null,
        status: 'info',
        note: `openEventLog every mode, appendMessage awaited one at a time, sampled in a shuffled order with the floor (writeSync + fdatasyncSync, O_APPEND); ${samples} samples after ${warmup} warm-up; p99 ${round(s99, 3)} ms`,
        details: { samples, warmup, recordBytes, p99Ms: round(s99), floorP99Ms: round(quantile(floor, 0.99)) },
      },
    ];
  },
};
