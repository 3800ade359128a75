import { type FileSystem, nodeFileSystem } from '../../src/index.js';

/** A fault armed on one file-system operation. */
export interface Fault {
  /** The errno code of the injected error (`ENOSPC`, `EIO`, …). */
  readonly code: string;
  /** How many calls fail; 1 by default. */
  times?: number;
  /** For `write`: write this many bytes for real before failing (a torn, short write). */
  readonly partial?: number;
  /** Let this many matching calls through before failing; 0 by default. */
  after?: number;
  /** Only calls whose path (for path operations) contains this string fail. */
  readonly pathIncludes?: string;
}

type Operation = keyof FileSystem;

/**
 * A wrapper around the real file system that fails chosen operations with an errno error, so tests can inject ENOSPC,
 * EIO on fdatasync, a failing rename… It also records every operation called, in order.
 */
export class FaultyFileSystem {
  readonly calls: string[] = [];
  readonly #faults = new Map<Operation, Fault>();
  readonly fs: FileSystem;

  constructor(base: FileSystem = nodeFileSystem) {
    const wrap =
      <K extends Operation>(op: K) =>
      // biome-ignore lint/suspicious/noExplicitAny: a generic pass-through of every FileSystem method.
      async (...args: any[]): Promise<any> => {
        this.calls.push(op);
        const fault = this.#faults.get(op);
        const path = typeof args[0] === 'string' ? args[0] : undefined;
        const matches = fault !== undefined && (fault.pathIncludes === undefined || path?.includes(fault.pathIncludes));
        if (fault !== undefined && matches && (fault.after ?? 0) > 0) fault.after = (fault.after ?? 0) - 1;
        else if (fault !== undefined && matches) {
          fault.times = (fault.times ?? 1) - 1;
          if (fault.times <= 0) this.#faults.delete(op);
          if (op === 'write' && fault.partial !== undefined) {
            const [fd, buffer, offset, , position] = args as [number, Uint8Array, number, number, number];
            await base.write(fd, buffer, offset, Math.min(fault.partial, buffer.length - offset), position);
          }
          throw Object.assign(new Error(`injected ${fault.code} on ${op}`), { code: fault.code });
        }
        // biome-ignore lint/suspicious/noExplicitAny: see above.
        return (base[op] as (...a: any[]) => Promise<any>)(...args);
      };
    this.fs = {
      open: wrap('open'),
      write: wrap('write'),
      read: wrap('read'),
      fdatasync: wrap('fdatasync'),
      fsync: wrap('fsync'),
      ftruncate: wrap('ftruncate'),
      fstat: wrap('fstat'),
      close: wrap('close'),
      stat: wrap('stat'),
      mkdir: wrap('mkdir'),
      fsyncDirectory: wrap('fsyncDirectory'),
      rename: wrap('rename'),
      link: wrap('link'),
      unlink: wrap('unlink'),
      readdir: wrap('readdir'),
      readFile: wrap('readFile'),
    };
  }

  /** Arms a fault on `op`: its next call(s) fail. */
  fail(op: Operation, fault: Fault): void {
    this.#faults.set(op, { ...fault });
  }
}
