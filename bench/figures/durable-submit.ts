import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { submittedRecord } from '../lib/floors.js';
import { median, nowMs, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { pendingRow } from './pending.js';

/**
 * Durable `submit` latency: the floor is a raw `writeSync` of the same ~400-byte line on an `O_APPEND` file followed
 * by `fdatasyncSync`, timed per record. The writer's `submit` is measured against it once the writer exists.
 */
export const durableSubmit: Figure = {
  id: 'durable-submit',
  title: 'durable submit latency vs raw writeSync + fdatasyncSync',
  async run(context): Promise<FigureRow[]> {
    const samples = context.mode === 'quick' ? 200 : 2000;
    const file = join(context.workDir, 'durable-floor.jsonl');
    const fd = openSync(file, 'a');
    const lines = Array.from({ length: samples + 20 }, (_, i) =>
      Buffer.from(`${JSON.stringify(submittedRecord(i))}\n`),
    );
    const latencies: number[] = [];
    try {
      for (let i = 0; i < lines.length; i += 1) {
        const start = nowMs();
        writeSync(fd, lines[i] as Buffer);
        fdatasyncSync(fd);
        if (i >= 20) latencies.push(nowMs() - start);
      }
    } finally {
      closeSync(fd);
    }
    const p50 = median(latencies);
    const p99 = quantile(latencies, 0.99);
    const recordBytes = lines[0]?.length ?? 0;
    context.log(`  raw append + fdatasync of ${recordBytes} B: median ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms`);
    const details = { samples, recordBytes, warmup: 20 };
    return [
      pendingRow({
        id: 'durable-submit-median',
        name: `durable submit latency, median (${recordBytes}-byte submitted)`,
        unit: 'ms',
        floor: round(p50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 1.15',
        note: `floor: writeSync + fdatasyncSync, O_APPEND, median of ${samples}`,
        details,
      }),
      pendingRow({
        id: 'durable-submit-p99',
        name: 'durable submit latency, p99',
        unit: 'ms',
        floor: round(p99),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        note: `floor: p99 of the same ${samples} samples`,
        details,
      }),
    ];
  },
};
