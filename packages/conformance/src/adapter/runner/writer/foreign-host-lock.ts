import { rmSync } from 'node:fs';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { impossiblePid, lockText, plantLock, target } from './support.js';

/**
 * `writer/foreign-host-lock`: a lock naming another host is never proved dead (TJ-DUR-020), even when its pid cannot
 * exist here — a writer that checks only the pid takes it over. Open must answer `journal_locked` and leave the lock.
 */
export async function foreignHostLockCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(
    'writer/foreign-host-lock',
    'a lock held on another host is not taken over, even when its pid cannot exist here',
    'writer',
    ['TJ-DUR-020', 'TJ-DUR-018', 'TJ-CONF-026'],
    async () => {
      const dir = freshDir('tj-conf-foreign-');
      const where = target(claims, dir);
      const planted = plantLock(where.file, {
        pid: impossiblePid(),
        host: 'tj-conformance-foreign-host.invalid',
        token: 'foreign-holder',
      });
      try {
        return await withAdapter(context, async (process) => {
          const failures: string[] = [];
          const code = await answerCode(openHandle(process, where.file, modes[0] as string));
          if (code !== 'journal_locked')
            failures.push(
              code === 'ok'
                ? 'open took over a lock held on another host (its holder cannot be proved dead, TJ-DUR-020)'
                : `expected error journal_locked, got ${code}`,
            );
          if (lockText(where.file) !== planted) failures.push('the foreign lock file was changed or removed');
          return { failures };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
