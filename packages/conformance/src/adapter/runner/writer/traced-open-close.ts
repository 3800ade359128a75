import type { AdapterProcess } from '../../process.js';
import { Random } from '../../random.js';
import type { WriterContext } from './context.js';
import { target, writerRecord } from './support.js';
import { checkDurableOpen, checkLockAppearsWhole, checkSyncBeforeClose } from './trace-steps.js';
import { withTracedAdapter } from './traced-adapter.js';

/**
 * `writer/durable-open` and `writer/none-close` (strace): a new file and its directory are fsynced before `open` is
 * answered (TJ-DUR-007, TJ-CONF-026), and its lock appeared by linking a written, synced file (TJ-DUR-029); in `none` mode, `close` is answered only after an fsync of the file (TJ-DUR-015).
 */
export async function tracedOpenCloseChecks(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  const traced = (body: (trace: () => string, process: AdapterProcess, file: string) => Promise<string[]>) =>
    withTracedAdapter(context, ({ process, dir, trace }) => body(trace, process, target(claims, dir).file));
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
