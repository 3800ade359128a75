import { FILE_SYSTEM_OPERATIONS, type FileSystem } from '../support/internals.js';

/** The name of one call of the {@link FileSystem} layer. */
export type FsOperation = keyof FileSystem;

// Every call of the layer (a list, so that wrapping a wrapper never wraps its extra members).
const FS_OPERATIONS = FILE_SYSTEM_OPERATIONS;

/** The calls of `base`, each wrapped by `wrap`. */
function wrapAll(wrap: (op: FsOperation) => unknown): FileSystem {
  return Object.fromEntries(FS_OPERATIONS.map((op) => [op, wrap(op)])) as unknown as FileSystem;
}

/** Calls whose first argument is a descriptor; the others take a path. */
const DESCRIPTOR_CALLS = new Set<FsOperation>(['write', 'read', 'fdatasync', 'fsync', 'ftruncate', 'fstat', 'close']);

/** One planned fault of {@link faultyFileSystem}. */
export interface Fault {
  /** The operation to disturb; `*` counts and disturbs calls of every operation (to fail the k-th call of a run). */
  readonly op: FsOperation | '*';
  /** Which matching call is disturbed, 1-based, counted from when the fault was injected; 1 by default. */
  readonly nth?: number;
  /** How many matching calls from the `nth` on are disturbed; 1 by default (`Infinity`: all of them). */
  readonly times?: number;
  /**
   * Only calls on a matching path count (for descriptor calls: the path the descriptor was opened with). A string
   * matches when the path ends with it.
   */
  readonly path?: string | RegExp;
  /** The errno code of the failure (`ENOSPC`, `EIO`, …); `EIO` by default. */
  readonly errno?: string;
  /**
   * For `write` and `read` only: instead of failing, move just this many of the requested bytes (half of them, at
   * least one, by default) and return that count, as a kernel may under memory pressure or on a signal (TJ-DUR-002).
   * A read cut to 0 bytes looks like the end of the file (a file that shrank under the reader).
   */
  readonly short?: true | ((length: number) => number);
  /**
   * For `write` only: before the call fails, this many of the requested bytes (half of them, none of a 1-byte write,
   * by default) really reach the file, as when a write is torn by the failure (a torn append, TJ-DUR-023).
   */
  readonly torn?: true | number | ((length: number) => number);
  /**
   * Runs when the fault fires, before the call fails (awaited): lets a test act while the disturbed call is in
   * flight, e.g. queue more appends behind a failing sync.
   */
  readonly before?: () => void | Promise<void>;
}

/** A fault that fired, and on which path. */
export interface FiredFault {
  /** The fault. */
  readonly fault: Fault;
  /** The path of the call it disturbed. */
  readonly path: string;
}

/** A {@link FileSystem} whose calls fail as planned; see {@link faultyFileSystem}. */
export interface FaultyFileSystem extends FileSystem {
  /** Arms more faults; each counts its matching calls from now. */
  inject(...faults: Fault[]): void;
  /** Disarms every fault not fired yet. */
  clear(): void;
  /** The faults that fired, in order. */
  readonly fired: readonly FiredFault[];
  /**
   * Runs before every call (called at once, awaited when it returns a promise), whether or not a fault disturbs it: lets
   * a test act at an exact point (while a compaction holds the lock, before its rename) or count every call as a step.
   * The call rejects with what it throws.
   */
  before: ((op: FsOperation, path: string) => void | Promise<void>) | undefined;
}

interface Armed {
  readonly fault: Fault;
  seen: number;
}

/** An errno-style error as Node.js raises it (`code`, `errno`, `syscall`, `path`). */
export function errnoError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: injected fault, ${syscall} '${path}'`);
  error.code = code;
  error.syscall = syscall;
  error.path = path;
  return error;
}

function matches(pattern: string | RegExp | undefined, path: string): boolean {
  if (pattern === undefined) return true;
  return typeof pattern === 'string' ? path.endsWith(pattern) : pattern.test(path);
}

/**
 * Wraps `base` so that planned calls fail with an errno error (ENOSPC, EIO, …), for writes after tearing part of their
 * bytes onto the file, or, for writes and reads, come back short. The
 * plan is given at creation and can be extended with {@link FaultyFileSystem.inject}; every other call goes to `base`
 * unchanged. Used to prove what the writer does on ENOSPC/EIO (TJ-DUR-022, TJ-DUR-023), failed syncs (TJ-DUR-021) and
 * short writes (TJ-DUR-002).
 */
export function faultyFileSystem(base: FileSystem, plan: readonly Fault[] = []): FaultyFileSystem {
  let armed: Armed[] = [];
  const fired: FiredFault[] = [];
  const paths = new Map<number, string>();

  /** The fault that disturbs this call, if any (every armed fault matching it counts the call). */
  const due = (op: FsOperation, path: string): Fault | undefined => {
    let hit: Fault | undefined;
    for (const entry of armed) {
      if ((entry.fault.op !== op && entry.fault.op !== '*') || !matches(entry.fault.path, path)) continue;
      entry.seen += 1;
      const first = entry.fault.nth ?? 1;
      if (hit === undefined && entry.seen >= first && entry.seen < first + (entry.fault.times ?? 1)) hit = entry.fault;
    }
    if (hit !== undefined) fired.push({ fault: hit, path });
    return hit;
  };

  const wrap = <K extends FsOperation>(op: K): FileSystem[K] => {
    const call = base[op] as (...args: unknown[]) => Promise<unknown>;
    const wrapped = async (...args: unknown[]) => {
      const path = DESCRIPTOR_CALLS.has(op) ? (paths.get(args[0] as number) ?? '?') : String(args[0]);
      const hook = fs.before?.(op, path);
      if (hook !== undefined) await hook;
      const fault = due(op, path);
      if (fault !== undefined) {
        await fault.before?.();
        if (fault.short !== undefined && (op === 'write' || op === 'read')) {
          const length = args[3] as number;
          const want = fault.short === true ? Math.max(1, Math.floor(length / 2)) : fault.short(length);
          return call.call(base, args[0], args[1], args[2], Math.min(length, want), args[4]);
        }
        if (fault.torn !== undefined && op === 'write') {
          const length = args[3] as number;
          const torn = fault.torn;
          const cut = Math.min(
            length,
            torn === true ? Math.floor(length / 2) : typeof torn === 'number' ? torn : torn(length),
          );
          if (cut > 0) await call.call(base, args[0], args[1], args[2], cut, args[4]);
        }
        throw errnoError(fault.errno ?? 'EIO', op, path);
      }
      const result = await call.apply(base, args);
      if (op === 'open') paths.set(result as number, path);
      if (op === 'close') paths.delete(args[0] as number);
      return result;
    };
    return wrapped as unknown as FileSystem[K];
  };

  const fs: FaultyFileSystem = {
    ...wrapAll(wrap),
    // A wrapper of the host's file system names the host's files (see FileSystem.hostPaths).
    ...(base.hostPaths === undefined ? {} : { hostPaths: base.hostPaths }),
    inject(...faults: Fault[]) {
      armed.push(...faults.map((fault) => ({ fault, seen: 0 })));
    },
    clear() {
      armed = [];
    },
    fired,
    before: undefined,
  };
  fs.inject(...plan);
  return fs;
}

/** One call seen by {@link recordingFileSystem}. */
export interface RecordedCall {
  /** The operation. */
  readonly op: FsOperation;
  /** Its path (for descriptor calls, the path the descriptor was opened with). */
  readonly path: string;
  /** Tick of the call's start (a counter shared by starts and ends). */
  readonly start: number;
  /** Tick of its end; undefined while it runs. */
  end: number | undefined;
  /** Whether it succeeded. */
  ok: boolean | undefined;
  /** `open`: the mode; `rename`: the target; `ftruncate`: the length. */
  readonly detail?: string | number;
  /** `write`: file position of the bytes. */
  readonly position?: number;
  /** `write`: bytes written (the result). */
  written?: number;
  /** `write`: a copy of the bytes written. */
  bytes?: Uint8Array;
}

/** A {@link FileSystem} that logs every call; see {@link recordingFileSystem}. */
export interface RecordingFileSystem extends FileSystem {
  /** Every call in start order. */
  readonly calls: RecordedCall[];
  /** The current tick: calls started or ended so far. Read it when an append resolves to order it among the calls. */
  now(): number;
  /** How many calls of `op` (optionally on a path ending with `path`) succeeded. */
  count(op: FsOperation, path?: string): number;
}

/**
 * Wraps `base` so that every call is logged with start and end ticks, paths and write positions: lets tests check
 * the order of calls (create → fsync file → fsync directory, TJ-DUR-007; copy → sync → truncate → fsync, TJ-DUR-005),
 * count syncs per durability mode (TJ-DUR-011..015) and prove that each acknowledgement follows a sync that started
 * after its bytes were written (TJ-DUR-003, TJ-DUR-014).
 */
/**
 * True for a write of pre-allocated space alone (spec §3.8): the zeros a writer adds ahead of its lines, in the
 * background, each followed by a sync of its own. Lines never hold a NUL byte, so a write that carries a line is never
 * one.
 */
export function isSpaceWrite(call: RecordedCall): boolean {
  return call.op === 'write' && call.bytes !== undefined && call.bytes.length > 0 && call.bytes.every((b) => b === 0);
}

export function recordingFileSystem(base: FileSystem): RecordingFileSystem {
  const calls: RecordedCall[] = [];
  const paths = new Map<number, string>();
  let tick = 0;
  const wrap = <K extends FsOperation>(op: K): FileSystem[K] => {
    const call = base[op] as (...args: unknown[]) => Promise<unknown>;
    const wrapped = async (...args: unknown[]) => {
      const path = DESCRIPTOR_CALLS.has(op) ? (paths.get(args[0] as number) ?? '?') : String(args[0]);
      const detail =
        op === 'open' || op === 'rename' || op === 'link'
          ? String(args[1])
          : op === 'ftruncate'
            ? (args[1] as number)
            : undefined;
      const entry: RecordedCall = {
        op,
        path,
        start: ++tick,
        end: undefined,
        ok: undefined,
        ...(detail === undefined ? {} : { detail }),
        ...(op === 'write' ? { position: args[4] as number } : {}),
      };
      calls.push(entry);
      try {
        const result = await call.apply(base, args);
        if (op === 'open') paths.set(result as number, path);
        if (op === 'close') paths.delete(args[0] as number);
        if (op === 'write') {
          const offset = args[2] as number;
          entry.written = result as number;
          entry.bytes = (args[1] as Uint8Array).slice(offset, offset + (result as number));
        }
        entry.ok = true;
        return result;
      } catch (error) {
        entry.ok = false;
        throw error;
      } finally {
        entry.end = ++tick;
      }
    };
    return wrapped as unknown as FileSystem[K];
  };
  const fs: RecordingFileSystem = {
    ...wrapAll(wrap),
    ...(base.hostPaths === undefined ? {} : { hostPaths: base.hostPaths }),
    calls,
    now: () => tick,
    count: (op: FsOperation, path?: string) =>
      calls.filter((c) => c.op === op && c.ok === true && (path === undefined || c.path.endsWith(path))).length,
  };
  return fs;
}
