import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { freshDir } from '../fresh-dir.js';
import { openHandle, type WriterContext, withAdapter } from './context.js';
import { lockText, target } from './support.js';

/**
 * `writer/lock-replaced`: when the lock changed hands while a writer held the file (an operator removed it and another
 * writer took it), that writer's close must not remove the new holder's lock (TJ-DUR-026: only its own `token`).
 */
export async function lockReplacedCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(
    'writer/lock-replaced',
    'close does not remove a lock that another writer holds now',
    'writer',
    ['TJ-DUR-026'],
    async () => {
      const dir = freshDir('tj-conf-replaced-');
      const where = target(claims, dir);
      try {
        return await withAdapter(context, async (process) => {
          const handle = await openHandle(process, where.file, modes[0] as string);
          if (lockText(where.file) === null) return { failures: ['after open there is no lock file'] };
          // Replace the lock atomically, as a take-over by another writer leaves it: a live pid (ours), another token.
          const other = `${JSON.stringify({ pid: globalThis.process.pid, host: hostname(), token: 'tj-conformance-new-holder' })}\n`;
          writeFileSync(`${where.file}.lock.replace`, other);
          renameSync(`${where.file}.lock.replace`, `${where.file}.lock`);
          await process.request('close', { handle });
          const after = lockText(where.file);
          return {
            failures:
              after === other
                ? []
                : [
                    after === null
                      ? 'close removed a lock that holds another writer’s token'
                      : 'close changed a lock that holds another writer’s token',
                  ],
          };
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
