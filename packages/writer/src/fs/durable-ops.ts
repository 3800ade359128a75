import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { JournalWriteError } from '../errors.js';
import { afterFailure } from './after-failure.js';
import type { FileSystem, SynchronousWrite, WriteOptions } from './file-system.js';

/** Runs one file-system call and turns its failure into a {@link JournalWriteError} naming file and operation. */
export async function attempt<T>(file: string, operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new JournalWriteError(file, operation, error);
  }
}

/** Writes all of `bytes` at `position`, repeating after short writes (TJ-DUR-002). */
export async function writeAll(
  fs: FileSystem,
  fd: number,
  bytes: Uint8Array,
  position: number,
  options?: WriteOptions,
): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const written = await fs.write(fd, bytes, done, bytes.length - done, position + done, options);
    // A zero-byte write would loop for ever; the kernel only returns it for a zero-length request.
    if (written <= 0) throw Object.assign(new Error('write returned 0 bytes'), { code: 'EIO' });
    done += written;
  }
}

/** {@link writeAll} through a file system's synchronous write (see `synchronousWrite`): throws what it would reject. */
export function writeAllNow(write: SynchronousWrite, fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.length) {
    const written = write(fd, bytes, done, bytes.length - done, position + done);
    if (written <= 0) throw Object.assign(new Error('write returned 0 bytes'), { code: 'EIO' });
    done += written;
  }
}

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

/**
 * Creates `dir` and any missing parents; after creating each directory it fsyncs that directory's parent so the new
 * entry survives a crash (TJ-DUR-008). Existing directories are left alone.
 */
export async function ensureDirectory(fs: FileSystem, dir: string): Promise<void> {
  try {
    if ((await fs.stat(dir)).isDirectory) return;
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw new JournalWriteError(dir, 'stat', error);
  }
  const parent = dirname(dir);
  if (parent !== dir) await ensureDirectory(fs, parent);
  try {
    await fs.mkdir(dir);
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return;
    throw new JournalWriteError(dir, 'mkdir', error);
  }
  await attempt(parent, 'fsync directory', () => fs.fsyncDirectory(parent));
}

/** The temporary name of an atomic replace of `target` (spec §4.5: `.<file>.<random>.tmp`). */
export function temporaryName(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** True when `name` is a temporary file of an atomic replace of the file named `targetName` (spec §4.5). */
export function isTemporaryOf(name: string, targetName: string): boolean {
  return (
    name.startsWith(`.${targetName}.`) &&
    name.endsWith('.tmp') &&
    /^[0-9a-f]+$/.test(name.slice(targetName.length + 2, -4))
  );
}

/**
 * Replaces `target` atomically with `chunks` (TJ-DUR-009): writes a temporary file in the same directory, fsyncs it,
 * renames it over the target and fsyncs the directory. Temporary files of earlier crashed replaces of the same
 * target are removed first (TJ-DUR-010). On a failure before the rename (the close of the copy included) the temporary
 * file is removed, best effort and never in place of the failure, and the target is unchanged.
 */
export async function replaceFile(
  fs: FileSystem,
  target: string,
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
): Promise<void> {
  const dir = dirname(target);
  await removeStaleTemporaries(fs, target);
  const temporary = temporaryName(target);
  const fd = await attempt(temporary, 'create', () => fs.open(temporary, 'create-exclusive'));
  try {
    let position = 0;
    for await (const chunk of chunks) {
      await attempt(temporary, 'write', () => writeAll(fs, fd, chunk, position));
      position += chunk.length;
    }
    await attempt(temporary, 'fsync', () => fs.fsync(fd));
  } catch (error) {
    await afterFailure(error, () => fs.close(fd));
    throw await afterFailure(error, () => fs.unlink(temporary));
  }
  try {
    await attempt(temporary, 'close', () => fs.close(fd));
  } catch (error) {
    // The close failed (EIO of a delayed write-back, NFS): the copy cannot be trusted, and must not stay behind next to
    // the target until the next replace of it clears it. Not closed again: on Linux the descriptor is gone anyway,
    // and its number may already be another file's. A failed removal leaves it to that next replace (TJ-DUR-010).
    throw await afterFailure(error, () => fs.unlink(temporary));
  }
  try {
    await fs.rename(temporary, target);
  } catch (error) {
    throw await afterFailure(new JournalWriteError(target, 'rename', error), () => fs.unlink(temporary));
  }
  await attempt(dir, 'fsync directory', () => fs.fsyncDirectory(dir));
}

/** Removes temporary files left by a crashed atomic replace of `target` (TJ-DUR-010). */
export async function removeStaleTemporaries(fs: FileSystem, target: string): Promise<void> {
  const dir = dirname(target);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return;
    throw new JournalWriteError(dir, 'readdir', error);
  }
  for (const name of names) {
    if (!isTemporaryOf(name, basename(target))) continue;
    await fs.unlink(join(dir, name)).catch((error: unknown) => {
      if (!isErrno(error, 'ENOENT')) throw new JournalWriteError(join(dir, name), 'unlink', error);
    });
  }
}
