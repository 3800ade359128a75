import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { submittedRecord } from '../lib/floors.js';
import { nowMs, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { pendingRow } from './pending.js';

/**
 * Group commit: 64 concurrent appenders on one journal (`group` mode) against per-record `every` mode. Until the
 * writer exists, the raw stand-ins are measured: one `writeSync` + `fdatasyncSync` per record (what `every` costs at
 * best) and 64 records in one `writeSync` + one `fdatasyncSync` (the most group commit can reach).
 */
export const groupCommit: Figure = {
  id: 'group-commit',
  title: 'group commit, 64 appenders on one journal vs per-record sync',
  async run(context): Promise<FigureRow[]> {
    const records = context.mode === 'quick' ? 256 : 2048;
    const lines = Array.from({ length: records }, (_, i) => Buffer.from(`${JSON.stringify(submittedRecord(i))}\n`));
    const perRecord = (() => {
      const fd = openSync(join(context.workDir, 'per-record.jsonl'), 'a');
      const start = nowMs();
      for (const line of lines) {
        writeSync(fd, line);
        fdatasyncSync(fd);
      }
      const ms = nowMs() - start;
      closeSync(fd);
      return records / (ms / 1000);
    })();
    const batched = (() => {
      const fd = openSync(join(context.workDir, 'batched.jsonl'), 'a');
      const start = nowMs();
      for (let i = 0; i < lines.length; i += 64) {
        writeSync(fd, Buffer.concat(lines.slice(i, i + 64)));
        fdatasyncSync(fd);
      }
      const ms = nowMs() - start;
      closeSync(fd);
      return records / (ms / 1000);
    })();
    context.log(
      `  raw per-record sync: ${perRecord.toFixed(0)} rec/s; raw 64-record batches: ${batched.toFixed(0)} rec/s`,
    );
    return [
      pendingRow({
        id: 'group-commit-64',
        name: 'group-commit throughput, 64 concurrent appenders on one journal',
        unit: 'records/s',
        floor: round(perRecord),
        ratioDefinition: 'value / floor (throughput); floor = per-record sync (raw until the writer lands)',
        direction: 'higher',
        target: 'ratio >= 10',
        note: `raw ceiling (64 records per write + fdatasync): ${round(batched)} records/s = ${round(batched / perRecord, 3)} x per-record`,
        details: { records, rawPerRecord: round(perRecord), rawBatched64: round(batched) },
      }),
    ];
  },
};
