import { readFileSync, rmSync } from 'node:fs';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { target, writerRecord } from './support.js';

/** Records a v1 schema rejects, per family: each must be refused with `bad_request` and write nothing. */
function invalidRecords(family: 'turn' | 'event', random: Random): { why: string; record: Record<string, unknown> }[] {
  const valid = writerRecord(family, 1, random);
  return family === 'turn'
    ? [
        { why: 'no turn_id', record: { ...valid, turn_id: undefined } },
        { why: 'created_at is a string', record: { ...valid, created_at: 'yesterday' } },
        { why: 'an empty turn_id', record: { ...valid, turn_id: '' } },
      ]
    : [
        { why: 'no seq', record: { ...valid, seq: undefined } },
        { why: 'a negative seq', record: { ...valid, seq: -1 } },
        { why: 'ts is a number', record: { ...valid, ts: 12 } },
      ];
}

/**
 * `writer/invalid-record`: a writer refuses a record its v1 schema rejects (TJ-COMPAT-018, TJ-TURN-015) — the adapter
 * answers `bad_request` — and writes no byte of it; a valid append afterwards still works.
 */
export async function invalidRecordCheck(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  await recorder.record(
    'writer/invalid-record',
    'an invalid record is refused with bad_request and no byte of it is written',
    'writer',
    ['TJ-COMPAT-018', 'TJ-TURN-015', 'TJ-CONF-027'],
    async () => {
      const dir = freshDir('tj-conf-invalid-');
      const where = target(claims, dir);
      const random = new Random(seed + 5);
      try {
        return await withAdapter(context, async (process) => {
          const failures: string[] = [];
          const handle = await openHandle(process, where.file, modes[0] as string);
          await process.request('append', { handle, record: writerRecord(where.family, 0, random) });
          const before = readFileSync(where.file);
          for (const { why, record } of invalidRecords(where.family, random)) {
            const code = await answerCode(
              process.request('append', { handle, record: JSON.parse(JSON.stringify(record)) }),
            );
            if (code !== 'bad_request') failures.push(`a record with ${why} was answered ${code}, not bad_request`);
          }
          const after = readFileSync(where.file);
          if (!after.equals(before))
            failures.push(`invalid records changed the file: ${after.length - before.length} byte(s) written`);
          const code = await answerCode(
            process.request('append', { handle, record: writerRecord(where.family, 1, random) }),
          );
          if (code !== 'ok') failures.push(`a valid append after the refused ones was answered ${code}`);
          await process.request('close', { handle });
          return { failures };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}

/** The default line-size limit readers and writers share (TJ-FRAME-031), in bytes without the LF. */
const DEFAULT_LINE_LIMIT = 16 * 1024 * 1024;

/**
 * `writer/line-too-long` (TJ-DUR-028): a record whose line would be one byte over the default line-size limit must be
 * refused with an error response, writing nothing — a reader with the same limit would skip the line, so the writer
 * would acknowledge a record no reader keeps. A valid append afterwards still works.
 */
export async function lineTooLongCheck(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  await recorder.record(
    'writer/line-too-long',
    'a record over the 16 MiB line-size limit is refused and no byte of it is written',
    'writer',
    ['TJ-DUR-028'],
    async () => {
      const dir = freshDir('tj-conf-line-limit-');
      const where = target(claims, dir);
      const random = new Random(seed + 28);
      try {
        return await withAdapter(context, async (process) => {
          const failures: string[] = [];
          const handle = await openHandle(process, where.file, modes[0] as string);
          await process.request('append', { handle, record: writerRecord(where.family, 0, random) });
          const before = readFileSync(where.file);
          const base = { ...writerRecord(where.family, 1, random), x_tj_padding: '' };
          // ASCII padding: the compact JSON text is then exactly as long as its UTF-8 bytes, whatever the adapter escapes.
          const padding = DEFAULT_LINE_LIMIT + 1 - JSON.stringify(base).length;
          const huge = { ...base, x_tj_padding: 'p'.repeat(padding) };
          const code = await answerCode(process.request('append', { handle, record: huge }));
          if (code === 'ok')
            failures.push(`a record of ${DEFAULT_LINE_LIMIT + 1} bytes (limit ${DEFAULT_LINE_LIMIT}) was acknowledged`);
          const after = readFileSync(where.file);
          if (!after.equals(before))
            failures.push(`the refused record changed the file: ${after.length - before.length} byte(s) written`);
          const next = await answerCode(
            process.request('append', { handle, record: writerRecord(where.family, 2, random) }),
          );
          if (next !== 'ok') failures.push(`a valid append after the refused one was answered ${next}`);
          await process.request('close', { handle });
          return { failures };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
