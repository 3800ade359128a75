import { rmSync } from 'node:fs';
import { AdapterFailure } from '../../process.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { target } from './support.js';

/** `writer/lock`: a second writer cannot open a file a live writer holds, and can once it closed. */
export async function lockCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  const record = recorder.record.bind(recorder);
  await record(
    'writer/lock',
    'a second writer cannot open a file a live writer holds',
    'writer',
    ['TJ-CONF-026', 'TJ-DUR-017', 'TJ-DUR-018', 'TJ-STORE-001'],
    async () => {
      const dir = freshDir('tj-conf-lock-');
      const where = target(claims, dir);
      const a = spawnAdapter(context);
      const b = spawnAdapter(context);
      try {
        await started(a);
        await started(b);
        const held = (await a.request('open', { file: where.file, durability: modes[0] })) as { handle: string };
        const failures: string[] = [];
        try {
          await b.request('open', { file: where.file, durability: modes[0] });
          failures.push('a second adapter opened a file that another live adapter holds');
        } catch (error) {
          if (!(error instanceof AdapterFailure && error.kind === 'error_response')) throw error;
          if (error.code !== 'journal_locked') failures.push(`expected error journal_locked, got ${error.message}`);
        }
        await a.request('close', { handle: held.handle });
        // Closing releases the lock (TJ-DUR-026): now the second writer may open the file.
        try {
          const reopened = (await b.request('open', { file: where.file, durability: modes[0] })) as {
            handle: string;
          };
          await b.request('close', { handle: reopened.handle });
        } catch (error) {
          failures.push(`after the holder closed, open still fails: ${(error as Error).message}`);
        }
        return { failures };
      } finally {
        await a.dispose();
        await b.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
