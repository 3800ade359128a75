import { ReaderError } from '@turnjournal/reader';
import { LineViewReader } from '@turnjournal/reader/_internals';
import type { JournalReader } from '@turnjournal/reader/record-store';
import { type FileSystem, synchronousRead } from '../fs/file-system.js';

/**
 * A lock-free reader of the journal file at `path`, through `fs`: the file's bytes are its line view, and its size
 * the end (pre-allocated space after the last line holds no line, and every read of the codec steps over it). A file
 * that does not exist fails with `not_found`.
 */
export async function openFileJournalReader(fs: FileSystem, path: string): Promise<JournalReader> {
  let fd: number;
  try {
    fd = await fs.open(path, 'read');
  } catch (error) {
    if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
      throw new ReaderError('not_found', `${path} does not exist`, { file: path }, { cause: error });
    throw error;
  }
  const readNow = synchronousRead(fs);
  return new LineViewReader(path, {
    read: (buffer, offset, length, position) => fs.read(fd, buffer, offset, length, position),
    ...(readNow === undefined
      ? {}
      : { readNow: (buffer, offset, length, position) => readNow(fd, buffer, offset, length, position) }),
    end: async () => (await fs.fstat(fd)).size,
    close: () => fs.close(fd),
  });
}
