import { renameSync, rmSync } from 'node:fs';
import { Random } from '../../random.js';
import { straceAvailable } from '../../strace.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, spawnAdapter, started, type WriterContext } from './context.js';
import {
  faultWrapper,
  faultyPath,
  type InjectedFault,
  SYNC_EIO,
  SYNC_EIO_ONCE,
  WRITE_EIO,
  WRITE_ENOSPC,
} from './injected-fault.js';
import { prefixProblems, STRACE_MISSING, survivors, target, writerRecord } from './support.js';

/** A fault check: its id, title and requirements, and the fault it injects. */
interface FaultCheck {
  readonly id: string;
  readonly title: string;
  readonly requirements: readonly string[];
  readonly fault: InjectedFault;
}

const FAULTS: readonly FaultCheck[] = [
  {
    id: 'writer/fault-fdatasync-eio',
    title:
      'an fsync/fdatasync failing with EIO: that append is refused, and every later one, even once syncs work again',
    requirements: ['TJ-DUR-021', 'TJ-CONF-014'],
    fault: SYNC_EIO,
  },
  {
    id: 'writer/fault-fdatasync-once',
    title:
      'an fsync/fdatasync failing with EIO once (a retry would succeed): that append is refused, and every later one',
    requirements: ['TJ-DUR-021', 'TJ-CONF-014'],
    fault: SYNC_EIO_ONCE,
  },
  {
    id: 'writer/fault-write-eio',
    title: 'a write failing with EIO: that append and the appends queued behind it are refused, nothing acked is lost',
    requirements: ['TJ-DUR-030', 'TJ-DUR-022', 'TJ-CONF-014'],
    fault: WRITE_EIO,
  },
  {
    id: 'writer/fault-write-enospc',
    title:
      'a write failing with ENOSPC: that append and the appends queued behind it are refused, nothing acked is lost',
    requirements: ['TJ-DUR-030', 'TJ-DUR-022', 'TJ-CONF-014'],
    fault: WRITE_ENOSPC,
  },
];

/** The fault checks (injected-fault.ts says how a fault is injected). */
export async function faultInjectionChecks(context: WriterContext): Promise<void> {
  const { claims, seed, recorder } = context;
  for (const { id, title, requirements, fault } of FAULTS)
    await recorder.record(id, title, 'writer', requirements, async () => {
      if (context.strace === 'never') return { skip: 'disabled: not proven', unproven: true };
      if (!claims.durability.includes('every')) return { skip: 'durability every not claimed' };
      if (!straceAvailable()) return { skip: STRACE_MISSING, unproven: true };
      const dir = freshDir('tj-conf-fault-');
      const where = target(claims, dir);
      const faulty = faultyPath(where.file);
      const random = new Random(seed + 9);
      const process = spawnAdapter(context, faultWrapper(where.file, fault));
      const failures: string[] = [];
      const acked: number[] = [];
      try {
        await started(process);
        const handle = await openHandle(process, where.file, 'every');
        const append = async (seq: number) => {
          const code = await answerCode(
            process.request('append', { handle, record: writerRecord(where.family, seq, random) }),
          );
          if (code === 'ok') acked.push(seq);
          return code;
        };
        for (let seq = 0; seq < 3; seq++)
          if ((await append(seq)) !== 'ok') failures.push(`append ${seq} before any fault was refused`);
        renameSync(where.file, faulty);
        // The failing append and one queued right behind it (pipelined).
        const [failing, queued] = await Promise.all([append(3), append(4)]);
        renameSync(faulty, where.file);
        if (failing === 'ok')
          failures.push(
            fault.oneShot === true
              ? `the append whose first ${fault.syscalls.split(',')[0]} failed (${fault.errno}) was acknowledged: a sync that succeeds after a failed one does not make the record durable, the kernel may have dropped its pages (TJ-DUR-021)`
              : `the append whose ${fault.syscalls.split(',')[0]} failed (${fault.errno}) was acknowledged`,
          );
        if (queued === 'ok') failures.push('an append queued behind the failing one was acknowledged');
        if (fault.poisons) {
          const later = await append(5);
          if (later === 'ok')
            failures.push(
              'after a failed sync, a later append was acknowledged: the file must refuse appends until reopened',
            );
        }
        await process.stop();
      } catch (error) {
        failures.push(error instanceof Error ? error.message : String(error));
      } finally {
        await process.dispose();
      }
      try {
        const after = await survivors(where.file);
        const lost = acked.filter((seq) => !after.seqs.includes(seq));
        if (lost.length > 0) failures.push(`acknowledged records lost: x_tj_seq ${lost.join(', ')}`);
        for (const p of prefixProblems(after.seqs)) failures.push(p);
        for (const f of after.findings) failures.push(`damage: ${f}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return { failures };
    });
}
