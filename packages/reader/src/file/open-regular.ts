import { closeSync, constants, fstatSync, openSync, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lstat, open } from 'node:fs/promises';
import { makeFinding } from '@turnjournal/schema';
import { ReaderError } from '../errors.js';

// O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer that may never come (and a thread stuck in
// open(2) keeps even process.exit() from ending the process). It has no effect on regular files, the only files kept.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** What a file that is not regular is, in words, for a `special_file` finding. */
export function describeSpecial(
  stats: Pick<Stats, 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice' | 'isSymbolicLink' | 'isDirectory'>,
): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isDirectory()) return 'a directory';
  return 'not a regular file';
}

/** The error a read of a special file raises: a `special_file` finding (spec TJ-FAM-024), never a hang. */
export function specialFileError(path: string, what: string): ReaderError {
  return ReaderError.fromFinding(
    makeFinding('special_file', `${what}, not a regular file: never opened for reading`, { file: path }),
  );
}

/**
 * Opens a file for reading without blocking and keeps the descriptor only when it is a regular file (spec TJ-FAM-024):
 * a FIFO, socket or device throws {@link ReaderError} with a `special_file` finding. The type is checked on the
 * open descriptor, so a file swapped for a FIFO after a directory listing is caught too. Links in `path` are followed:
 * which links a scan may follow is discovery's decision (TJ-FAM-025).
 */
export function openRegularSync(path: string): { fd: number; stats: Stats } {
  const fd = openSync(path, READ_FLAGS);
  let stats: Stats;
  try {
    stats = fstatSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (!stats.isFile()) {
    closeSync(fd);
    throw specialFileError(path, describeSpecial(stats));
  }
  return { fd, stats };
}

/** {@link openRegularSync} with a promise `FileHandle`, for readers that use one. */
export async function openRegular(path: string): Promise<FileHandle> {
  const handle = await open(path, READ_FLAGS);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw specialFileError(path, describeSpecial(stats));
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** False when nothing is at `path` (its directory may be missing too); anything else that fails is thrown. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw error;
  }
}
