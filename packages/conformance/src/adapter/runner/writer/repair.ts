import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { truncate } from '../../process.js';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { openHandle, type WriterContext, withAdapter } from './context.js';
import { target, writerRecord } from './support.js';

const line = (record: unknown) => `${JSON.stringify(record)}\n`;

/**
 * `writer/quarantine` and `writer/mid-file-damage`: torn-tail repair copies exactly the torn bytes to
 * `<file>.<offset>.torn` (TJ-DUR-005), and never touches a committed line — damage in the middle of the file survives
 * byte for byte, however odd (TJ-DUR-005 truncates to the last LF only).
 */
export async function repairChecks(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  await recorder.record(
    'writer/quarantine',
    'torn-tail repair copies exactly the torn bytes to <file>.<offset>.torn',
    'writer',
    ['TJ-DUR-005'],
    async () => {
      const dir = freshDir('tj-conf-quarantine-');
      const where = target(claims, dir);
      const random = new Random(seed + 6);
      const complete = [0, 1].map((seq) => line(writerRecord(where.family, seq, random))).join('');
      const torn = '{"version":1,"event":"completed","turn_id":"t000000","créa';
      writeFileSync(where.file, complete + torn);
      try {
        return await withAdapter(context, async (process) => {
          const handle = await openHandle(process, where.file, modes[0] as string);
          await process.request('close', { handle });
          const name = `${basename(where.file)}.${Buffer.byteLength(complete)}.torn`;
          const siblings = readdirSync(dirname(where.file));
          if (!siblings.includes(name))
            return { failures: [`no quarantine file ${name} next to the journal (found: ${siblings.join(', ')})`] };
          const saved = readFileSync(join(dirname(where.file), name));
          return saved.equals(Buffer.from(torn, 'utf8'))
            ? { failures: [] }
            : {
                failures: [
                  `${name} holds ${truncate(JSON.stringify(saved.toString('utf8')), 300)}, not the torn bytes ${JSON.stringify(torn)}`,
                ],
              };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
  await recorder.record(
    'writer/mid-file-damage',
    'repair keeps every committed line, damaged ones included, byte for byte',
    'writer',
    ['TJ-DUR-005', 'TJ-DUR-004'],
    async () => {
      const dir = freshDir('tj-conf-midfile-');
      const where = target(claims, dir);
      const random = new Random(seed + 7);
      const committed = [
        line(writerRecord(where.family, 0, random)),
        'this line is not JSON\n',
        '{"glued":1}{"glued":2}\n',
        '\n',
        `${JSON.stringify(writerRecord(where.family, 1, random)).replace(/,/g, ', ')}\r\n`,
        line(writerRecord(where.family, 2, random)),
      ].join('');
      writeFileSync(where.file, `${committed}{"torn":`);
      const appended = writerRecord(where.family, 3, random);
      try {
        return await withAdapter(context, async (process) => {
          const handle = await openHandle(process, where.file, modes[0] as string);
          await process.request('append', { handle, record: appended });
          await process.request('close', { handle });
          const actual = readFileSync(where.file, 'utf8');
          const expected =
            committed +
            line(appended)
              .replace(/\u2028/g, '\\u2028')
              .replace(/\u2029/g, '\\u2029');
          return actual === expected
            ? { failures: [] }
            : {
                failures: [
                  'the committed lines did not survive repair byte for byte, or the new line is not right after them',
                  `expected: ${truncate(JSON.stringify(expected), 600)}`,
                  `actual:   ${truncate(JSON.stringify(actual), 600)}`,
                ],
              };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
