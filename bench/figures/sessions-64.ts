import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { submittedRecord } from '../lib/floors.js';
import { nowMs, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { pendingRow } from './pending.js';

/**
 * Durable appends across 64 sessions at once. Floor: 64 concurrent loops, one per file, each appending a record with
 * `FileHandle.write` and waiting for `FileHandle.datasync` before the next (libuv's default pool of 4 threads runs the
 * system calls, as it would for the writer).
 */
export const sessions64: Figure = {
  id: 'sessions-64',
  title: 'durable appends across 64 sessions vs raw concurrent append + fdatasync',
  async run(context): Promise<FigureRow[]> {
    const perSession = context.mode === 'quick' ? 8 : 40;
    const sessions = 64;
    const handles = await Promise.all(
      Array.from({ length: sessions }, (_, s) => open(join(context.workDir, `session-${s}.jsonl`), 'a')),
    );
    const line = (s: number, i: number) => Buffer.from(`${JSON.stringify(submittedRecord(s * 100000 + i))}\n`);
    let ms = 0;
    try {
      const start = nowMs();
      await Promise.all(
        handles.map(async (handle, s) => {
          for (let i = 0; i < perSession; i += 1) {
            await handle.write(line(s, i));
            await handle.datasync();
          }
        }),
      );
      ms = nowMs() - start;
    } finally {
      await Promise.all(handles.map((h) => h.close()));
    }
    const throughput = (sessions * perSession) / (ms / 1000);
    context.log(`  raw 64-file concurrent append + fdatasync: ${throughput.toFixed(0)} records/s`);
    return [
      pendingRow({
        id: 'sessions-64',
        name: 'durable appends across 64 sessions at once',
        unit: 'records/s',
        floor: round(throughput),
        ratioDefinition: 'value / floor (throughput)',
        direction: 'higher',
        target: 'ratio >= 0.8',
        note: `floor: 64 files x ${perSession} records, write + datasync each, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`,
        details: { sessions, perSession, ms: round(ms) },
      }),
    ];
  },
};
