// One place for how the writer checks inject a system-call fault (the fault checks, and the histories that meet one):
// the adapter runs under `strace -P <file>.fault -e inject=…`, so the syscalls fail only on a descriptor whose file is
// named `<file>.fault`, and the harness renames the open journal to that name to start the fault and back to end it —
// deterministic, whatever thread or order the adapter's syscalls take.

/** A system-call fault: which syscalls fail, with which errno, and what the writer must do after it. */
export interface InjectedFault {
  /** Syscalls that fail, as strace names them. */
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

const SYNCS = 'fdatasync,fsync';
const WRITES = 'write,pwrite64,writev,pwritev';

/** An fsync/fdatasync failing with EIO for as long as the fault lasts. */
export const SYNC_EIO: InjectedFault = { syscalls: SYNCS, errno: 'EIO', poisons: true };
/** An fsync/fdatasync failing with EIO once: a retry would succeed. */
export const SYNC_EIO_ONCE: InjectedFault = { ...SYNC_EIO, oneShot: true };
/** A write failing with EIO. */
export const WRITE_EIO: InjectedFault = { syscalls: WRITES, errno: 'EIO', poisons: false };
/** A write failing with ENOSPC. */
export const WRITE_ENOSPC: InjectedFault = { syscalls: WRITES, errno: 'ENOSPC', poisons: false };

/** The name the harness renames the journal `file` to while the fault lasts. */
export const faultyPath = (file: string): string => `${file}.fault`;

/** The strace command an adapter process runs under so that `fault` hits the journal `file` while it is renamed. */
export function faultWrapper(file: string, fault: InjectedFault): string[] {
  return [
    'strace',
    '-f',
    '-qq',
    '-o',
    '/dev/null',
    '-P',
    faultyPath(file),
    '-e',
    `trace=${fault.syscalls}`,
    '-e',
    `inject=${fault.syscalls}:error=${fault.errno}${fault.oneShot === true ? ':when=1' : ''}`,
    '--',
  ];
}
