import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Random } from '../../random.js';
import { straceAvailable, straceWrapper } from '../../strace.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { STRACE_MISSING, target, writerRecord } from './support.js';
import { checkDurableOpen, checkLockAppearsWhole, checkSyncBeforeClose } from './trace-steps.js';

/**
 * `writer/durable-open` and `writer/none-close` (strace): a new file and its directory are fsynced before `open` is
 * answered (TJ-DUR-007, TJ-CONF-026), and its lock appeared by linking a written, synced file (TJ-DUR-029); in `none` mode, `close` is answered only after an fsync of the file (TJ-DUR-015).
 */
export async function tracedOpenCloseChecks(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  const traced = async (
    body: (trace: () => string, process: ReturnType<typeof spawnAdapter>, file: string) => Promise<string[]>,
  ) => {
    if (context.strace === 'never') return { skip: 'disabled: not proven', unproven: true as const };
    if (!straceAvailable()) return { skip: STRACE_MISSING, unproven: true as const };
    const dir = freshDir('tj-conf-traced-');
    const where = target(claims, dir);
    const traceFile = join(dir, 'trace.txt');
    const process = spawnAdapter(context, straceWrapper(traceFile));
    try {
      await started(process);
      return { failures: await body(() => readFileSync(traceFile, 'utf8'), process, where.file) };
    } finally {
      await process.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  await recorder.record(
    'writer/durable-open',
    'a new file and its directory are fsynced, and its lock appears whole, before open is answered (strace)',
    'writer',
    ['TJ-DUR-007', 'TJ-CONF-026', 'TJ-DUR-029'],
    async () =>
      traced(async (trace, process, file) => {
        const opened = process.request('open', { file, durability: modes[0] });
        const openId = process.lastRequestId;
        const { handle } = (await opened) as { handle: string };
        await process.request('close', { handle });
        await process.stop();
        return [...checkDurableOpen(trace(), file, openId), ...checkLockAppearsWhole(trace(), `${file}.lock`, openId)];
      }),
  );
  await recorder.record(
    'writer/none-close',
    'in none mode, close is answered only after an fsync of the file (strace)',
    'writer',
    ['TJ-DUR-015'],
    async () => {
      if (!claims.durability.includes('none')) return { skip: 'durability none not claimed' };
      return traced(async (trace, process, file) => {
        const random = new Random(seed + 8);
        const { handle } = (await process.request('open', { file, durability: 'none' })) as { handle: string };
        for (let seq = 0; seq < 3; seq++)
          await process.request('append', {
            handle,
            record: writerRecord(claims.families.includes('turn') ? 'turn' : 'event', seq, random),
          });
        const closed = process.request('close', { handle });
        const closeId = process.lastRequestId;
        await closed;
        await process.stop();
        return checkSyncBeforeClose(trace(), file, closeId);
      });
    },
  );
}
