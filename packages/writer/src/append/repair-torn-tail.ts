import { JournalWriteError } from '../errors.js';
import { attempt, replaceFile } from '../fs/durable-ops.js';
import type { FileSystem } from '../fs/file-system.js';

/** A torn tail moved aside and cut off by {@link repairTornTail}. */
export interface TornTailRepair {
  /** Offset of the torn bytes: the byte after the file's last LF (0 when it has none). The file's new length. */
  readonly offset: number;
  /** How many torn bytes there were. */
  readonly length: number;
  /** The quarantine file holding them, `<file>.<offset>.torn` (spec §4.5). */
  readonly quarantine: string;
}

const SCAN_BYTES = 64 * 1024;

/**
 * Repairs the torn tail of an open journal file before the first append (TJ-DUR-005): finds the last LF by reading
 * backwards from the end, copies the bytes after it to `<file>.<offset>.torn` (replaced atomically and synced, so a
 * repair that crashes and runs again ends the same), truncates the file to the LF and fsyncs it. Returns null when
 * the file ends with an LF or is empty. Only the tail is read: the cost follows the torn bytes, not the file.
 */
export async function repairTornTail(fs: FileSystem, path: string, fd: number): Promise<TornTailRepair | null> {
  const { size } = await attempt(path, 'fstat', () => fs.fstat(fd));
  if (size === 0) return null;
  const offset = await findLineEnd(fs, path, fd, size);
  if (offset === size) return null;
  const quarantine = `${path}.${offset}.torn`;
  await replaceFile(fs, quarantine, readRange(fs, path, fd, offset, size));
  await attempt(path, 'ftruncate', () => fs.ftruncate(fd, offset));
  await attempt(path, 'fsync', () => fs.fsync(fd));
  return { offset, length: size - offset, quarantine };
}

/** The offset just after the last LF of the file (0 when there is none). */
async function findLineEnd(fs: FileSystem, path: string, fd: number, size: number): Promise<number> {
  const buffer = new Uint8Array(Math.min(SCAN_BYTES, size));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - buffer.length);
    const length = end - start;
    await readExactly(fs, path, fd, buffer, length, start);
    const at = buffer.subarray(0, length).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

async function* readRange(fs: FileSystem, path: string, fd: number, from: number, to: number) {
  for (let position = from; position < to; position += SCAN_BYTES) {
    const length = Math.min(SCAN_BYTES, to - position);
    const buffer = new Uint8Array(length);
    await readExactly(fs, path, fd, buffer, length, position);
    yield buffer;
  }
}

async function readExactly(
  fs: FileSystem,
  path: string,
  fd: number,
  buffer: Uint8Array,
  length: number,
  position: number,
): Promise<void> {
  let done = 0;
  while (done < length) {
    const read = await attempt(path, 'read', () => fs.read(fd, buffer, done, length - done, position + done));
    // Only another process could shrink a file whose lock we hold; fail with the writer's error, never a bare Error.
    if (read === 0) throw new JournalWriteError(path, 'read', new Error('the file shrank while it was being repaired'));
    done += read;
  }
}
