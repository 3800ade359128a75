import { join } from 'node:path';
import { writeEventLog } from '../generate/event-log.js';
import { reader } from '../lib/reader.js';
import { gc, median, nowMs, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';

/**
 * Event-log recovery (`recoverEventLog`, backwards to the last valid checkpoint, then forwards) on a log of 100k
 * events against one of 1k events, both with a checkpoint every 50 records. The cost must follow the tail, so the
 * ratio of the medians must stay under 1.5.
 */
export const eventRecovery: Figure = {
  id: 'event-recovery',
  title: 'event-log recovery, 100k events vs 1k events',
  async run(context): Promise<FigureRow[]> {
    const iterations = context.mode === 'quick' ? 100 : 400;
    const small = join(context.workDir, 'conv-small', 'events.jsonl');
    const large = join(context.workDir, 'conv-large', 'events.jsonl');
    const smallStats = writeEventLog(small, { events: 1_000, seed: 3 });
    const largeStats = writeEventLog(large, { events: 100_000, seed: 3 });
    context.log(
      `  1k log: ${(smallStats.bytes / 1e3).toFixed(0)} kB; 100k log: ${(largeStats.bytes / 1e6).toFixed(1)} MB`,
    );
    const bytesRead = { small: 0, large: 0 };
    const once = async (path: string, key: 'small' | 'large') => {
      const start = nowMs();
      const result = await reader.recoverEventLog(path);
      const ms = nowMs() - start;
      bytesRead[key] = result.bytesRead;
      if (result.checkpointOffset === null) throw new Error(`no checkpoint found in ${path}`);
      return ms;
    };
    for (let i = 0; i < 20; i += 1) {
      await once(small, 'small');
      await once(large, 'large');
    }
    const samples = { small: [] as number[], large: [] as number[] };
    for (let i = 0; i < iterations; i += 1) {
      if (i % 50 === 0) gc();
      samples.small.push(await once(small, 'small'));
      samples.large.push(await once(large, 'large'));
    }
    const smallMs = median(samples.small);
    const largeMs = median(samples.large);
    return [
      {
        id: 'event-recovery',
        name: 'event-log recovery, 100k events vs 1k events (checkpoint every 50)',
        value: round(largeMs, 3),
        unit: 'ms',
        floor: round(smallMs, 3),
        ratioDefinition: 'value (100k median) / floor (1k median); lower is better',
        ratio: round(largeMs / smallMs, 3),
        direction: 'lower',
        target: 'ratio <= 1.5',
        met: largeMs / smallMs <= 1.5,
        status: 'measured',
        note: `medians of ${iterations} alternated runs; bytes read 1k: ${bytesRead.small}, 100k: ${bytesRead.large} (files ${smallStats.bytes} / ${largeStats.bytes} B)`,
        details: {
          iterations,
          small: { ...smallStats, bytesRead: bytesRead.small, p99Ms: round(quantile(samples.small, 0.99)) },
          large: { ...largeStats, bytesRead: bytesRead.large, p99Ms: round(quantile(samples.large, 0.99)) },
        },
      },
    ];
  },
};
