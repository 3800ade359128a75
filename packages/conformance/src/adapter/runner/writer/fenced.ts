import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { target, writerRecord } from './support.js';

/**
 * `writer/fenced`: once another writer holds the lock of a file this writer has open (it took the lock over while this
 * one was paused past its lease, or an operator removed the lock), this writer's next append in a durable mode, and
 * every later one, must be refused (TJ-DUR-040): acknowledging on would promise records that two owners interleave.
 * Whether the refused record's bytes reached the file is not checked: a writer may learn of the take-over only after
 * its write, and a taker that replaced the file (TJ-DUR-041) never sees them.
 */
export async function fencedCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(
    'writer/fenced',
    'an append after the lock changed hands is refused and not written',
    'writer',
    // The file binding's fencing (TJ-DUR-040) is the seam's rule for a file store (TJ-STORE-008).
    ['TJ-DUR-040', 'TJ-STORE-008'],
    async () => {
      const dir = freshDir('tj-conf-fenced-');
      const where = target(claims, dir);
      const random = new Random(40);
      try {
        return await withAdapter(context, async (process) => {
          const failures: string[] = [];
          const handle = await openHandle(process, where.file, modes[0] as string);
          await process.request('append', { handle, record: writerRecord(where.family, 0, random) });
          // Replace the lock atomically, as a take-over leaves it: another holder, another token, another inode.
          const other = `${JSON.stringify({ pid: globalThis.process.pid, host: hostname(), token: 'tj-conformance-taker' })}\n`;
          writeFileSync(`${where.file}.lock.replace`, other);
          renameSync(`${where.file}.lock.replace`, `${where.file}.lock`);
          for (const seq of [1, 2]) {
            const code = await answerCode(
              process.request('append', { handle, record: writerRecord(where.family, seq, random) }),
            );
            if (code === 'ok')
              failures.push(`append ${seq} after another writer took the lock was acknowledged (TJ-DUR-040)`);
          }
          await answerCode(process.request('close', { handle }));
          return { failures };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
