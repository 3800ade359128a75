import { closeSync, read, readSync } from 'node:fs';

// The reads of a journal file by descriptor that the codec's path form makes (see readJournal): the file binding's
// side of reading, kept apart so that the codec itself reaches no file system.

/** One positional read: the buffer, the bytes asked for, and the bytes read. */
export interface ChunkRead {
  readonly chunk: Buffer;
  readonly length: number;
  readonly bytesRead: number;
}

// A failed read rejects rather than throws, so its error reaches the caller where a read on demand would have: after
// the batch read before it.
export function readNow(fd: number, position: number, length: number): ChunkRead | Promise<ChunkRead> {
  const chunk = Buffer.allocUnsafe(length);
  try {
    return { chunk, length, bytesRead: readSync(fd, chunk, 0, length, position) };
  } catch (error) {
    const failed = Promise.reject(error);
    failed.catch(() => undefined);
    return failed;
  }
}

export function readAhead(fd: number, position: number, length: number): Promise<ChunkRead> {
  const chunk = Buffer.allocUnsafe(length);
  const pending = new Promise<ChunkRead>((resolve, reject) =>
    read(fd, chunk, 0, length, position, (error, bytesRead) =>
      error === null ? resolve({ chunk, length, bytesRead }) : reject(error),
    ),
  );
  // Handled here so a failure while the caller holds a batch is not an unhandled rejection; it is awaited later.
  pending.catch(() => undefined);
  return pending;
}

/** A synchronous positional read into `buffer`: the bytes read. */
export function readAtSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
  return readSync(fd, buffer, offset, length, position);
}

/** Closes a descriptor the codec opened. */
export function closeFd(fd: number): void {
  closeSync(fd);
}
