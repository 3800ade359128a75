import { readLockStatus } from '@turnjournal/reader/store-format';
import { AppendFile } from '../append/append-file.js';
import { WriterError } from '../errors.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import { acquireLock } from '../fs/lock.js';
import { spaceAtEnd } from '../fs/space-at-end.js';

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
