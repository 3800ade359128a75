import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { target, writerRecord } from './support.js';

/**
 * `writer/symlink` (TJ-DUR-031): a journal path that is a symbolic link — to a file outside the store, or to nothing —
 * must not be opened through the link. `open` must be refused with an error response; the outside file must keep its
 * bytes, no file may appear where a dangling link points, and the link must stay a link.
 */
export async function symlinkCheck(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  await recorder.record(
    'writer/symlink',
    'open refuses a journal path that is a symbolic link, and writes nothing through it',
    'writer',
    ['TJ-DUR-031'],
    async () => {
      const dir = freshDir('tj-conf-symlink-');
      const where = target(claims, dir);
      const random = new Random(seed + 31);
      const outside = join(dir, 'outside.jsonl');
      const original = Buffer.from(`${JSON.stringify(writerRecord(where.family, 0, random))}\n`);
      writeFileSync(outside, original);
      const dangling = join(dir, 'absent.jsonl');
      try {
        return await withAdapter(context, async (process) => {
          const failures: string[] = [];
          for (const [name, to] of [
            ['a link to a file outside the store', outside],
            ['a dangling link', dangling],
          ] as const) {
            rmSync(where.file, { force: true });
            symlinkSync(to, where.file);
            const opened = process.request('open', { file: where.file, durability: modes[0] as string });
            const code = await answerCode(opened);
            if (code === 'ok') {
              failures.push(`open of ${name} was answered ok`);
              // Show what following the link does: an append through it, then close.
              const { handle } = (await opened) as { handle: string };
              await answerCode(process.request('append', { handle, record: writerRecord(where.family, 1, random) }));
              await answerCode(process.request('close', { handle }));
            }
            if (!lstatSync(where.file).isSymbolicLink()) failures.push(`${name} was replaced by a regular file`);
          }
          if (!readFileSync(outside).equals(original))
            failures.push('the file outside the store that the link names was changed through the link');
          if (existsSync(dangling)) failures.push('a file was created where the dangling link points');
          const strays = readdirSync(dir).filter((name) => name.startsWith('outside.jsonl.'));
          if (strays.length > 0) failures.push(`files appeared beside the outside file: ${strays.join(', ')}`);
          return { failures };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}

/**
 * `writer/fifo` (TJ-DUR-032): a FIFO where the journal should be must be refused by `open` with an error response,
 * within the request timeout: a writer that opens it waiting for a reader hangs (the harness's timeout fails the
 * check), and one that opens it without waiting and appends would acknowledge records no reader can ever find.
 * Needs `mkfifo`; without it the check is skipped and the claim is not proven.
 */
export async function fifoCheck(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  await recorder.record(
    'writer/fifo',
    'open refuses a journal path that is a FIFO, without blocking',
    'writer',
    ['TJ-DUR-032'],
    async () => {
      const dir = freshDir('tj-conf-fifo-');
      const where = target(claims, dir);
      try {
        try {
          execFileSync('mkfifo', [where.file], { stdio: 'ignore' });
        } catch (error) {
          return {
            skip: `mkfifo (coreutils) could not create a FIFO in ${dirname(where.file)}: ${(error as Error).message}`,
            unproven: true,
          };
        }
        return await withAdapter(context, async (process) => {
          const failures: string[] = [];
          const opened = process.request('open', { file: where.file, durability: modes[0] as string });
          const code = await answerCode(opened);
          if (code === 'ok') {
            failures.push('open of a FIFO was answered ok');
            const { handle } = (await opened) as { handle: string };
            const appended = await answerCode(
              process.request('append', { handle, record: writerRecord(where.family, 0, new Random(seed + 32)) }),
            );
            if (appended === 'ok') failures.push('an append to the FIFO was acknowledged: no reader will ever see it');
          }
          if (!lstatSync(where.file).isFIFO()) failures.push('the FIFO was replaced');
          return { failures };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
