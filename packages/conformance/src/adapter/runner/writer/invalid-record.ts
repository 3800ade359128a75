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
