import { JournalWriteError } from '../errors.js';
import { attempt, replaceFile } from '../fs/durable-ops.js';
import type { FileSystem } from '../fs/file-system.js';

const CHUNK_BYTES = 1024 * 1024;

/**
 * Gives the journal at `path` a new file identity by replacing it with a copy of itself (TJ-DUR-041), after its lock
 * was taken over from a holder that was only presumed dead (its lease expired, TJ-DUR-039). Such a holder may still
 * run — stopped, or stalled on a disk — and write through the descriptor it has: after the replace, those writes land
 * in the old file, which no name leads to any more, instead of over the records this writer appends, and the holder's
 * own checks refuse to acknowledge them (its lock is gone, TJ-DUR-040, and so is its file's name, TJ-DUR-036). The
 * copy costs a read and a write of the file, paid only on such a take-over. A file that does not exist is left so.
 */
export async function replaceWithCopy(fs: FileSystem, path: string): Promise<void> {
  let fd: number;
  try {
    fd = await fs.open(path, 'read');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new JournalWriteError(path, 'open', error);
  }
  let replaced: { readonly error: unknown } | undefined;
  try {
    await replaceFile(fs, path, chunksOf(fs, path, fd));
  } catch (error) {
    replaced = { error };
  }
  // A read-only descriptor: its close loses no data. Its failure is reported unless the replace's failure is the
  // answer already, which then carries it (`suppressed`).
  try {
    await fs.close(fd);
  } catch (error) {
    const closeFailure = new JournalWriteError(path, 'close', error);
    if (replaced === undefined) throw closeFailure;
    if (replaced.error instanceof JournalWriteError)
      replaced.error.suppressed = [...(replaced.error.suppressed ?? []), closeFailure];
  }
  if (replaced !== undefined) throw replaced.error;
}

async function* chunksOf(fs: FileSystem, path: string, fd: number): AsyncGenerator<Uint8Array> {
  let position = 0;
  for (;;) {
    const buffer = new Uint8Array(CHUNK_BYTES);
    const read = await attempt(path, 'read', () => fs.read(fd, buffer, 0, CHUNK_BYTES, position));
    if (read === 0) return;
    position += read;
    yield buffer.subarray(0, read);
  }
}
