import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { submittedRecord } from '../lib/floors.js';
import { judge, nowMs, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';

const APPENDERS = 64;

/**
 * Group commit: 64 concurrent appenders on one journal, each awaiting its `appendRecord` before the next, with the
 * writer's `AppendFile` in `group` mode, against the same 64 appenders in per-record `every` mode (the floor the
 * issue's table names), both in this run on the same disk with the same ~400-byte records. Also reported: the raw
 * stand-ins, one `writeSync` + `fdatasyncSync` per record (what `every` costs at best) and 64 records in one
 * `writeSync` + one `fdatasyncSync` (the most group commit can reach).
 */
export const groupCommit: Figure = {
  id: 'group-commit',
  title: 'group commit, 64 appenders on one journal vs per-record sync',
  async run(context): Promise<FigureRow[]> {
    const records = context.mode === 'quick' ? 256 : 2048;
    const perAppender = records / APPENDERS;
    const values = Array.from({ length: records }, (_, i) => submittedRecord(i));
    const lines = values.map((v) => Buffer.from(`${JSON.stringify(v)}\n`));
    const rawPerRecord = (() => {
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
    const rawBatched = (() => {
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
    const appenders = async (durability: 'every' | 'group') => {
      const file = await writer.AppendFile.open(join(context.workDir, `${durability}.jsonl`), { durability });
      let ms = 0;
      try {
        const start = nowMs();
        await Promise.all(
          Array.from({ length: APPENDERS }, async (_, a) => {
            for (let i = 0; i < perAppender; i += 1) await file.appendRecord(values[a * perAppender + i]);
          }),
        );
        ms = nowMs() - start;
      } finally {
        await file.close();
      }
      if (file.size !== lines.reduce((n, l) => n + l.length, 0)) throw new Error(`${durability}: wrong size written`);
      return records / (ms / 1000);
    };
    const every = await appenders('every');
    const group = await appenders('group');
    context.log(
      `  raw per-record sync: ${rawPerRecord.toFixed(0)} rec/s; raw 64-record batches: ${rawBatched.toFixed(0)} rec/s; ` +
        `writer every: ${every.toFixed(0)} rec/s; writer group: ${group.toFixed(0)} rec/s`,
    );
    return [
      {
        id: 'group-commit-64',
        name: 'group-commit throughput, 64 concurrent appenders on one journal',
        value: round(group),
        unit: 'records/s',
        floor: round(every),
        ratioDefinition: 'value / floor (throughput); floor = the same 64 appenders in per-record `every` mode',
        direction: 'higher',
        ...judge(group / every, 'higher', 10),
        target: 'ratio >= 10',
        status: 'measured',
        note:
          `AppendFile group vs every, ${APPENDERS} appenders x ${perAppender} awaited appendRecord each; ` +
          `raw per-record writeSync + fdatasyncSync ${round(rawPerRecord)} records/s (group = ${round(group / rawPerRecord, 3)} x), ` +
          `raw ceiling (64 records per write + fdatasync) ${round(rawBatched)} records/s (group = ${round(group / rawBatched, 3)} x)`,
        details: {
          records,
          appenders: APPENDERS,
          writerGroup: round(group),
          writerEvery: round(every),
          rawPerRecord: round(rawPerRecord),
          rawBatched64: round(rawBatched),
        },
      },
    ];
  },
};
