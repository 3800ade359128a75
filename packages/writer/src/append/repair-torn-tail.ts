import { trailingNulCount } from '@turnjournal/reader/store-format';
import { JournalWriteError } from '../errors.js';
import { attempt, replaceFile } from '../fs/durable-ops.js';
import type { FileSystem } from '../fs/file-system.js';

/** A torn tail moved aside and cut off by {@link repairTornTail}. */
export interface TornTailRepair {
  /** Offset of the torn bytes: the byte after the file's last LF (0 when it has none). The file's new length. */
  readonly offset: number;
  /** How many torn bytes there were, without the pre-allocated space after them (spec §3.8). */
  readonly length: number;
  /** The quarantine file holding them, `<file>.<offset>.torn` (spec §4.5). */
  readonly quarantine: string;
}

/** What {@link repairTornTail} found at the end of a file, and left there. */
export interface RepairedTail {
  /** The torn tail it moved aside and cut off (with any space after it), or null when there was none. */
  readonly tornTail: TornTailRepair | null;
  /** Where the file's lines end: the byte after its last LF (0 when it has none). */
  readonly linesEnd: number;
  /** The file's length now: `linesEnd` plus the pre-allocated space kept after the lines (spec §3.8). */
  readonly fileEnd: number;
}

const SCAN_BYTES = 64 * 1024;

/**
 * Repairs the torn tail of an open journal file before the first append (TJ-DUR-005): finds, reading backwards from
 * the end, the run of NUL bytes that ends the file (pre-allocated space, spec §3.8) and the last LF before the bytes
 * that are not NUL. When bytes other than NUL follow that LF, they are the torn tail: they are copied to
 * `<file>.<offset>.torn` (replaced atomically and synced, so a repair that crashes and runs again ends the same), and
 * the file is truncated to the LF, space included, and fsynced. Pre-allocated space after the last LF is kept: the
 * next append overwrites it (TJ-DUR-033). Only the tail is read: the cost follows the torn bytes and the space.
 */
export async function repairTornTail(fs: FileSystem, path: string, fd: number): Promise<RepairedTail> {
  const { size } = await attempt(path, 'fstat', () => fs.fstat(fd));
  if (size === 0) return { tornTail: null, linesEnd: 0, fileEnd: 0 };
  const { linesEnd, dataEnd } = await findLinesEnd(fs, path, fd, size);
  if (linesEnd === dataEnd) return { tornTail: null, linesEnd, fileEnd: size };
  const quarantine = `${path}.${linesEnd}.torn`;
  await replaceFile(fs, quarantine, readRange(fs, path, fd, linesEnd, dataEnd));
  await attempt(path, 'ftruncate', () => fs.ftruncate(fd, linesEnd));
  await attempt(path, 'fsync', () => fs.fsync(fd));
  return { tornTail: { offset: linesEnd, length: dataEnd - linesEnd, quarantine }, linesEnd, fileEnd: linesEnd };
}

/**
 * `dataEnd`: the byte after the last byte that is not NUL (0 when there is none); `linesEnd`: the byte after the last
 * LF before it (0 when there is none).
 */
async function findLinesEnd(
  fs: FileSystem,
  path: string,
  fd: number,
  size: number,
): Promise<{ linesEnd: number; dataEnd: number }> {
  const buffer = new Uint8Array(Math.min(SCAN_BYTES, size));
  let dataEnd = -1;
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - buffer.length);
    const length = end - start;
    await readExactly(fs, path, fd, buffer, length, start);
    let at = length - 1;
    if (dataEnd < 0) {
      at -= trailingNulCount(buffer, 0, length);
      if (at < 0) {
        end = start;
        continue;
      }
      dataEnd = start + at + 1;
    }
    const lf = buffer.subarray(0, at + 1).lastIndexOf(0x0a);
    if (lf >= 0) return { linesEnd: start + lf + 1, dataEnd };
    end = start;
  }
  return { linesEnd: 0, dataEnd: Math.max(0, dataEnd) };
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
