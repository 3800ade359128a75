import { rmSync } from 'node:fs';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { heldBytes } from './store-lines.js';
import { target, writerRecord } from './support.js';

/**
 * Records a writer must not write, per family: records a v1 schema rejects, and a record with an integer readers in
 * several languages would misread (TJ-FRAME-035). Each must be refused with `bad_request` and write nothing.
 */
function invalidRecords(family: 'turn' | 'event', random: Random): { why: string; record: Record<string, unknown> }[] {
  const valid = writerRecord(family, 1, random);
  // 2^53: exact as a JavaScript number on the wire, one past the safe range.
  const unsafe = { why: 'an integer of 2^53 in an extension member', record: { ...valid, x_tj_count: 2 ** 53 } };
  return family === 'turn'
    ? [
        { why: 'no turn_id', record: { ...valid, turn_id: undefined } },
        { why: 'created_at is a string', record: { ...valid, created_at: 'yesterday' } },
        { why: 'an empty turn_id', record: { ...valid, turn_id: '' } },
        unsafe,
      ]
    : [
        { why: 'no seq', record: { ...valid, seq: undefined } },
        { why: 'a negative seq', record: { ...valid, seq: -1 } },
        { why: 'ts is a number', record: { ...valid, ts: 12 } },
        unsafe,
      ];
}

/**
 * The scenario both refusal checks share: in a fresh store, append one valid record, let `refuse` send the appends that
 * must be refused (it returns its failures), then check that the file did not change and that a valid append still
 * works.
 */
async function refusedAppends(
  context: WriterContext,
  prefix: string,
  seed: number,
  refuse: (
    send: (record: Record<string, unknown>) => Promise<string>,
    family: 'turn' | 'event',
    random: Random,
  ) => Promise<string[]>,
): Promise<{ failures: string[] }> {
  const dir = freshDir(prefix);
  const where = target(context.claims, dir);
  const random = new Random(seed);
  try {
    return await withAdapter(context, async (process) => {
      const handle = await openHandle(process, where.file, context.modes[0] as string);
      const send = (record: Record<string, unknown>) => answerCode(process.request('append', { handle, record }));
      await process.request('append', { handle, record: writerRecord(where.family, 0, random) });
      const before = await heldBytes(context, where.file, process);
      const failures = await refuse(send, where.family, random);
      const after = await heldBytes(context, where.file, process);
      if (!after.equals(before))
        failures.push(`the refused records changed the journal: ${after.length - before.length} byte(s) written`);
      const code = await send(writerRecord(where.family, 99, random));
      if (code !== 'ok') failures.push(`a valid append after the refused ones was answered ${code}`);
      await process.request('close', { handle });
      return { failures };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `writer/invalid-record`: a writer refuses a record its v1 schema rejects (TJ-COMPAT-018, TJ-TURN-015), or one with
 * an integer outside ±(2^53 − 1) (TJ-FRAME-035) — the adapter
 * answers `bad_request` — and writes no byte of it; a valid append afterwards still works.
 */
export async function invalidRecordCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/invalid-record',
    'an invalid record is refused with bad_request and no byte of it is written',
    'writer',
    ['TJ-COMPAT-018', 'TJ-TURN-015', 'TJ-FRAME-035', 'TJ-CONF-027'],
    () =>
      refusedAppends(context, 'tj-conf-invalid-', context.seed + 5, async (send, family, random) => {
        const failures: string[] = [];
        for (const { why, record } of invalidRecords(family, random)) {
          // Through JSON: a member set to undefined is absent, as it would be on the wire.
          const code = await send(JSON.parse(JSON.stringify(record)));
          if (code !== 'bad_request') failures.push(`a record with ${why} was answered ${code}, not bad_request`);
        }
        return failures;
      }),
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
  await context.recorder.record(
    'writer/line-too-long',
    'a record over the 16 MiB line-size limit is refused and no byte of it is written',
    'writer',
    ['TJ-DUR-028'],
    () =>
      refusedAppends(context, 'tj-conf-line-limit-', context.seed + 28, async (send, family, random) => {
        const base = { ...writerRecord(family, 1, random), x_tj_padding: '' };
        // ASCII padding: the compact JSON text is then exactly as long as its UTF-8 bytes, whatever the adapter escapes.
        const padding = DEFAULT_LINE_LIMIT + 1 - JSON.stringify(base).length;
        const code = await send({ ...base, x_tj_padding: 'p'.repeat(padding) });
        return code === 'ok'
          ? [`a record of ${DEFAULT_LINE_LIMIT + 1} bytes (limit ${DEFAULT_LINE_LIMIT}) was acknowledged`]
          : [];
      }),
  );
}
