import { renameSync, rmSync } from 'node:fs';
import { Random } from '../../random.js';
import { straceAvailable } from '../../strace.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, spawnAdapter, started, type WriterContext } from './context.js';
import { prefixProblems, STRACE_MISSING, survivors, target, writerRecord } from './support.js';

interface Fault {
  readonly id: string;
  readonly title: string;
  readonly requirements: readonly string[];
  /** Syscalls that fail, and the errno they fail with. */
  readonly syscalls: string;
  readonly errno: 'EIO' | 'ENOSPC';
  /** After the fault is lifted, appends must still be refused (a failed sync poisons the file, TJ-DUR-021). */
  readonly poisons: boolean;
  /**
   * The fault hits only the first such syscall on the file (strace `when=1`, counted per thread and syscall): a retry
   * of the failed call then succeeds, so a writer that retries a failed sync and acknowledges shows.
   */
  readonly oneShot?: true;
}

const FAULTS: readonly Fault[] = [
  {
    id: 'writer/fault-fdatasync-eio',
    title:
      'an fsync/fdatasync failing with EIO: that append is refused, and every later one, even once syncs work again',
    requirements: ['TJ-DUR-021', 'TJ-CONF-014'],
    syscalls: 'fdatasync,fsync',
    errno: 'EIO',
    poisons: true,
  },
  {
    id: 'writer/fault-fdatasync-once',
    title:
      'an fsync/fdatasync failing with EIO once (a retry would succeed): that append is refused, and every later one',
    requirements: ['TJ-DUR-021', 'TJ-CONF-014'],
    syscalls: 'fdatasync,fsync',
    errno: 'EIO',
    poisons: true,
    oneShot: true,
  },
  {
    id: 'writer/fault-write-eio',
    title: 'a write failing with EIO: that append and the appends queued behind it are refused, nothing acked is lost',
    requirements: ['TJ-DUR-030', 'TJ-DUR-022', 'TJ-CONF-014'],
    syscalls: 'write,pwrite64,writev,pwritev',
    errno: 'EIO',
    poisons: false,
  },
  {
    id: 'writer/fault-write-enospc',
    title:
      'a write failing with ENOSPC: that append and the appends queued behind it are refused, nothing acked is lost',
    requirements: ['TJ-DUR-030', 'TJ-DUR-022', 'TJ-CONF-014'],
    syscalls: 'write,pwrite64,writev,pwritev',
    errno: 'ENOSPC',
    poisons: false,
  },
];

/**
 * Fault injection through strace: the adapter runs under `strace -P <file>.fault -e inject=…`, so a syscall fails only
 * on a descriptor whose file is named `<file>.fault`. The harness renames the open journal to that name to start the
 * fault and back to end it: deterministic, whatever thread or order the adapter's syscalls take.
 */
export async function faultInjectionChecks(context: WriterContext): Promise<void> {
  const { claims, seed, recorder } = context;
  for (const fault of FAULTS)
    await recorder.record(fault.id, fault.title, 'writer', fault.requirements, async () => {
      if (context.strace === 'never') return { skip: 'disabled: not proven', unproven: true };
      if (!claims.durability.includes('every')) return { skip: 'durability every not claimed' };
      if (!straceAvailable()) return { skip: STRACE_MISSING, unproven: true };
      const dir = freshDir('tj-conf-fault-');
      const where = target(claims, dir);
      const faulty = `${where.file}.fault`;
      const random = new Random(seed + 9);
      const wrapper = [
        'strace',
        '-f',
        '-qq',
        '-o',
        '/dev/null',
        '-P',
        faulty,
        '-e',
        `trace=${fault.syscalls}`,
        '-e',
        `inject=${fault.syscalls}:error=${fault.errno}${fault.oneShot === true ? ':when=1' : ''}`,
        '--',
      ];
      const process = spawnAdapter(context, wrapper);
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
