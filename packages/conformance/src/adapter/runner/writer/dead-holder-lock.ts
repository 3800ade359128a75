import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { impossiblePid, lockText, plantLock, target } from './support.js';

/**
 * `writer/dead-holder-lock`: a lock left on this host by a pid that cannot run is taken over (TJ-DUR-019), and the
 * new holder's lock is removed on close (TJ-DUR-026).
 */
export async function deadHolderLockCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(
    'writer/dead-holder-lock',
    'a lock of a dead process on this host is taken over; close removes the new lock',
    'writer',
    ['TJ-DUR-019', 'TJ-DUR-026', 'TJ-CONF-026'],
    async () => {
      const dir = freshDir('tj-conf-dead-');
      const where = target(claims, dir);
      const planted = plantLock(where.file, { pid: impossiblePid(), host: hostname(), token: 'dead-holder' });
      try {
        return await withAdapter(context, async (process) => {
          const failures: string[] = [];
          let handle: string | null = null;
          const code = await answerCode(
            openHandle(process, where.file, modes[0] as string).then((h) => {
              handle = h;
            }),
          );
          if (code !== 'ok') return { failures: [`open of a file with a dead holder's lock answered ${code}`] };
          const held = lockText(where.file);
          if (held === null || held === planted) failures.push('after open, the file holds no lock of the new writer');
          await process.request('close', { handle });
          if (lockText(where.file) !== null) failures.push('close left the lock file behind (TJ-DUR-026)');
          return { failures };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
