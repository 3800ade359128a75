import type { FileSystem } from '../fs/file-system.js';

/**
 * A file-system layer around the one an event log was opened with, that stops writes to the log after a failed one.
 *
 * Why: event records carry their `seq` in their bytes, and seqs are reserved when an append is called, so appends
 * that overlap a failing one are already encoded with the seqs after it and queued in the {@link AppendFile}. The
 * append file truncates the failed record back (TJ-DUR-023) and would then write those later records, leaving a
 * hole in the seqs that a reader reports as `seq_gap` and that a client resuming by seq could never fill
 * (TJ-EVENT-003). The fence sees the failure synchronously in the write call itself (no reliance on the order in
 * which promise callbacks run), refuses every later write of the log's data file until the event log has settled
 * every queued append and re-read its state from the file, and so the failed seq is simply reused by the next append.
 *
 * Only writes to descriptors opened on the log's own path are fenced: lock files, quarantines and the temporary file
 * of a compaction pass through.
 */
export class WriteFence {
  /** The layer to pass to {@link AppendFile.open}. */
  readonly fs: FileSystem;
  readonly #inner: FileSystem;
  readonly #path: string;
  readonly #dataFds = new Set<number>();
  #closed = false;

  constructor(inner: FileSystem, path: string) {
    this.#inner = inner;
    this.#path = path;
    // Every method delegates explicitly: a layer implemented as a class keeps its methods on the prototype.
    this.fs = {
      read: (fd, buffer, offset, length, position) => inner.read(fd, buffer, offset, length, position),
      fdatasync: (fd) => inner.fdatasync(fd),
      fsync: (fd) => inner.fsync(fd),
      ftruncate: (fd, length) => inner.ftruncate(fd, length),
      fstat: (fd) => inner.fstat(fd),
      stat: (target) => inner.stat(target),
      mkdir: (target) => inner.mkdir(target),
      fsyncDirectory: (target) => inner.fsyncDirectory(target),
      rename: (from, to) => inner.rename(from, to),
      link: (existing, newPath) => inner.link(existing, newPath),
      unlink: (target) => inner.unlink(target),
      readdir: (target) => inner.readdir(target),
      readFile: (target) => inner.readFile(target),
      open: async (target, mode) => {
        const fd = await inner.open(target, mode);
        if (target === this.#path) this.#dataFds.add(fd);
        return fd;
      },
      close: async (fd) => {
        this.#dataFds.delete(fd);
        return inner.close(fd);
      },
      write: async (fd, buffer, offset, length, position) => {
        if (!this.#dataFds.has(fd)) return inner.write(fd, buffer, offset, length, position);
        if (this.#closed)
          throw Object.assign(
            new Error(
              'not written: an earlier append to this event log failed, and a record queued behind it carries a seq after the failed one; it is refused so that no seq is skipped (retry it)',
            ),
            { code: 'ECANCELED' },
          );
        try {
          return await inner.write(fd, buffer, offset, length, position);
        } catch (error) {
          this.#closed = true;
          throw error;
        }
      },
    };
  }

  /** True after a failed write, until {@link WriteFence.reopen}. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Lets writes through again: the event log calls it once it has re-read its state after the failure. */
  reopen(): void {
    this.#closed = false;
  }

  /** The wrapped layer. */
  get inner(): FileSystem {
    return this.#inner;
  }
}
