import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Random } from '../../random.js';
import { checkSyncBeforeAck, straceAvailable, straceWrapper } from '../../strace.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { STRACE_MISSING, target, writerRecord } from './support.js';

/** `writer/fsync-before-ack` (strace): every acknowledged append is covered by a sync of its file before the answer. */
export async function fsyncBeforeAckCheck(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  const record = recorder.record.bind(recorder);
  await record(
    'writer/fsync-before-ack',
    'every acknowledged append is covered by an fsync/fdatasync of its file before the acknowledgement (strace)',
    'writer',
    // The records are `submitted` records when the turn family is claimed (TJ-DUR-001), and every claimed mode among
    // `every` and `group` is traced (TJ-DUR-014: a group's shared sync must precede each of its acknowledgements).
    ['TJ-CONF-014', 'TJ-DUR-003', 'TJ-DUR-001', 'TJ-DUR-014'],
    async () => {
      if (context.strace === 'never')
        return { skip: 'disabled: durability before the acknowledgement not proven', unproven: true };
      if (!straceAvailable()) return { skip: STRACE_MISSING, unproven: true };
      const dir = freshDir('tj-conf-strace-');
      const where = target(claims, dir);
      const traceFile = join(dir, 'trace.txt');
      const random = new Random(seed + 1);
      const process = spawnAdapter(context, straceWrapper(traceFile));
      try {
        await started(process);
        const acks: { id: number; seq: number }[] = [];
        for (const durability of modes) {
          const { handle } = (await process.request('open', { file: where.file, durability })) as { handle: string };
          const base = acks.length;
          await Promise.all(
            Array.from({ length: 20 }, (_, i) => {
              const seq = base + i;
              const pending = process.request('append', { handle, record: writerRecord(where.family, seq, random) });
              const id = process.lastRequestId;
              return pending.then(() => acks.push({ id, seq }));
            }),
          );
          await process.request('close', { handle });
        }
        await process.stop();
        const failures = checkSyncBeforeAck(readFileSync(traceFile, 'utf8'), where.file, acks);
        return {
          failures: failures.length > 10 ? [...failures.slice(0, 10), `… ${failures.length - 10} more`] : failures,
        };
      } finally {
        await process.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
