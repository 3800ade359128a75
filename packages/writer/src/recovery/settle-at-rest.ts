import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { readLockStatus } from '@turnjournal/reader/store-format';
import { AppendFile } from '../append/append-file.js';
import { WriterError } from '../errors.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import { acquireLock } from '../fs/lock.js';

/** A file whose writer is gone, made plain JSONL at rest by startup recovery (TJ-RECOV-014). */
export interface SettledFile {
  /** The journal file or state document. */
  readonly file: string;
  /** Bytes cut from its end: the pre-allocated space, and a torn tail (moved aside to `<file>.<offset>.torn` first). */
  readonly trimmedBytes: number;
  /** True when it had a lock left by a writer that is gone, now removed. */
  readonly removedLock: boolean;
}

/** What {@link settleFilesAtRest} did. */
export interface FilesAtRest {
  /** The files it changed. */
  readonly settled: readonly SettledFile[];
  /** Files a live writer holds (or whose holder cannot be proved gone): left alone. */
  readonly held: readonly string[];
}

/**
 * Leaves every given file whose writer is gone plain JSONL at rest (spec TJ-RECOV-014): no NUL bytes of pre-allocated
 * space after its last line (§3.8), which a crashed writer leaves and nothing else removes (a run file is never
 * reopened), and no lock file beside it. Such a file is opened as its next writer would open it — taking the lock
 * over (TJ-DUR-019; a copy first when the holder is only presumed dead, TJ-DUR-041), moving a torn tail aside
 * (TJ-DUR-005) — and closed, which truncates the space (TJ-DUR-034) and removes the lock. A state document (`.json`,
 * replaced whole, never pre-allocated) only has a leftover lock removed. Nothing is appended to any file
 * (TJ-RECOV-012). Files without space or lock are not touched; files a live writer holds are left alone, also when a
 * writer takes one between the look and the open.
 */
export async function settleFilesAtRest(
  files: readonly string[],
  fs: FileSystem = nodeFileSystem,
): Promise<FilesAtRest> {
  const settled: SettledFile[] = [];
  const held: string[] = [];
  for (const file of files) {
    const lock = readLockStatus(file);
    if (lock === 'live' || lock === 'unproven') {
      held.push(file);
      continue;
    }
    const removedLock = lock !== 'none';
    try {
      if (file.endsWith('.json')) {
        if (!removedLock) continue;
        await (await acquireLock(fs, `${file}.lock`, file)).release();
        settled.push({ file, trimmedBytes: 0, removedLock });
        continue;
      }
      const before = spaceAtEnd(file);
      if (before === undefined || (!before.endsInNul && !removedLock)) continue;
      const opened = await AppendFile.open(file, { durability: 'none', preallocate: false, fs });
      await opened.close();
      settled.push({ file, trimmedBytes: before.size - (await fs.stat(file)).size, removedLock });
    } catch (error) {
      if (!(error instanceof WriterError && error.code === 'journal_locked')) throw error;
      held.push(file);
    }
  }
  return { settled, held };
}

/**
 * The file's size and whether its last byte is NUL (pre-allocated space, §3.8); undefined once it is gone. A look, not
 * a write: made directly, as the lock status is, so the file-system layer sees only the opens of the writer (recovery
 * counts them, one per journal it appends to). Never follows a link, never opens a FIFO (TJ-DUR-031, TJ-DUR-032).
 */
function spaceAtEnd(file: string): { size: number; endsInNul: boolean } | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    // Removed since the audit listed it (a sweep, an operator): nothing left to settle. A symbolic link given by name
    // is read through, but never written through (TJ-DUR-031): not this function's to settle either.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    // A FIFO or device under a journal's name is reported by the readers (TJ-FAM-024), never a writer's to open.
    if (!stats.isFile()) return undefined;
    if (stats.size === 0) return { size: 0, endsInNul: false };
    const last = Buffer.alloc(1);
    const read = readSync(fd, last, 0, 1, stats.size - 1);
    return { size: stats.size, endsInNul: read === 1 && last[0] === 0 };
  } finally {
    closeSync(fd);
  }
}
