import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { deltaRecord } from '../lib/floors.js';
import { median, nowMs, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { pendingRow } from './pending.js';

/** Non-durable (`none`) append throughput; floor: a raw `JSON.stringify` + `writeSync` loop of the same records. */
export const appendNone: Figure = {
  id: 'append-none',
  title: 'non-durable append throughput vs raw JSON.stringify + writeSync',
  async run(context): Promise<FigureRow[]> {
    const records = context.mode === 'quick' ? 50_000 : 300_000;
    const runs = context.mode === 'quick' ? 3 : 5;
    const values = Array.from({ length: records }, (_, i) => deltaRecord(i));
    const samples: number[] = [];
    let bytes = 0;
    for (let r = 0; r < runs; r += 1) {
      const fd = openSync(join(context.workDir, `none-floor-${r}.jsonl`), 'a');
      const start = nowMs();
      for (const value of values) bytes += writeSync(fd, `${JSON.stringify(value)}\n`);
      samples.push(nowMs() - start);
      closeSync(fd);
    }
    const ms = median(samples);
    const throughput = records / (ms / 1000);
    context.log(`  raw JSON.stringify + writeSync: ${throughput.toFixed(0)} records/s`);
    return [
      pendingRow({
        id: 'append-none',
        name: 'non-durable append throughput (none mode)',
        unit: 'records/s',
        floor: round(throughput),
        ratioDefinition: 'value / floor (throughput)',
        direction: 'higher',
        target: 'ratio >= 0.7',
        note: `floor: ${records} chat.delta records (${Math.round(bytes / runs / records)} B), one writeSync each, median of ${runs}`,
        details: { records, runs, samplesMs: samples.map((s) => round(s)) },
      }),
    ];
  },
};
