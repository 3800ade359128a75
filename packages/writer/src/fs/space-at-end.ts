import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * The file's size and whether its last byte is NUL (pre-allocated space, §3.8); undefined once it is gone. A look, not
 * a write: made directly, as the lock status is, so the file-system layer sees only the opens of the writer (recovery
 * counts them, one per journal it appends to). Never follows a link, never opens a FIFO (TJ-DUR-031, TJ-DUR-032).
 */
export function spaceAtEnd(file: string): { size: number; endsInNul: boolean } | undefined {
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
