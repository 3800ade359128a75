import { ReaderError } from '../errors.js';
import type { JournalSource } from '../framing/read-journal.js';
import { trailingNulCount } from '../framing/space.js';

/** A committed line met by `readLinesBackward`: its bytes, or only its length when over the limit. */
export type BackwardLine =
  | {
      readonly kind: 'line';
      /** 0-based byte offset of the line's first byte. */
      readonly offset: number;
      /** The line's bytes without the LF (a CR before it is still there). */
      readonly bytes: Uint8Array;
    }
  | {
      readonly kind: 'oversized';
      /** 0-based byte offset of the line's first byte. */
      readonly offset: number;
      /** Length of the line in bytes, without the LF; it was never buffered (TJ-FRAME-032). */
      readonly length: number;
    };

/** Counts what a backward read cost, so callers and tests can see that it followed the tail (TJ-REPLAY-005). */
export interface ReadCounter {
  /** Bytes read so far. */
  bytesRead: number;
  /**
   * Set by the scan once it has read past the pre-allocated space at the end (spec §3.8): where that space starts,
   * `end` when there is none, 0 when every byte is NUL. Bytes from there on hold no record.
   */
  spaceStart?: number;
}

/**
 * Yields the committed lines of a byte source (a file, or a descriptor a writer holds) from the last to the first, reading `chunkBytes` at a time backwards
 * from byte `end` with positional reads. Bytes after the last LF before `end` are a torn tail and are skipped
 * (TJ-REPLAY-006); before them, the run of NUL bytes that ends at `end` is pre-allocated space (TJ-FRAME-036),
 * stepped over at memory-scan speed and recorded in `counter.spaceStart`, so that a forward read after the scan
 * stops there instead of reading the space again. A line longer than a chunk is assembled from several reads; a line
 * over `maxLineBytes` is reported by length without being buffered. The caller stops the scan by leaving the loop; nothing before the
 * last line it consumed is read beyond the current chunk.
 */
export async function* readLinesBackward(
  source: JournalSource,
  end: number,
  chunkBytes: number,
  maxLineBytes: number,
  counter: ReadCounter = { bytesRead: 0 },
): AsyncGenerator<BackwardLine> {
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes < 1) {
    throw new ReaderError('invalid_option', `chunkBytes must be a positive integer, got ${String(chunkBytes)}`);
  }
  // The bytes of the line being assembled, last part first; the line ends at `lineEnd` (the offset of its LF).
  let parts: Uint8Array[] = [];
  let partsLength = 0;
  let skipping = false;
  let lineEnd: number | undefined;
  let position = end;
  let inSpace = true;
  counter.spaceStart = end;
  while (position > 0) {
    const from = Math.max(0, position - chunkBytes);
    const chunk = Buffer.allocUnsafe(position - from);
    let filled = 0;
    while (filled < chunk.length) {
      const bytesRead = await source.read(chunk, filled, chunk.length - filled, from + filled);
      if (bytesRead === 0)
        throw new ReaderError('file_shrank', `file shrank while being read backwards at byte ${from + filled}`);
      filled += bytesRead;
    }
    counter.bytesRead += filled;
    let stop = chunk.length;
    if (inSpace) {
      // Space is all NUL and holds no LF: only the chunk that holds its start has anything to split.
      stop -= trailingNulCount(chunk);
      counter.spaceStart = from + stop;
      inSpace = stop === 0;
    }
    for (let lf = chunk.lastIndexOf(0x0a, stop - 1); lf >= 0; lf = lf > 0 ? chunk.lastIndexOf(0x0a, lf - 1) : -1) {
      if (lineEnd !== undefined) {
        const length = partsLength + (stop - lf - 1);
        const offset = from + lf + 1;
        if (skipping || length > maxLineBytes) yield { kind: 'oversized', offset, length };
        else yield { kind: 'line', offset, bytes: join(chunk.subarray(lf + 1, stop), parts, length) };
      }
      // Before the first LF met, the bytes were a torn tail: dropped.
      lineEnd = from + lf;
      parts = [];
      partsLength = 0;
      skipping = false;
      stop = lf;
    }
    if (lineEnd !== undefined && stop > 0) {
      partsLength += stop;
      if (skipping || partsLength > maxLineBytes) {
        skipping = true;
        parts = [];
      } else {
        parts.unshift(chunk.subarray(0, stop));
      }
    }
    position = from;
  }
  if (lineEnd !== undefined) {
    if (skipping || partsLength > maxLineBytes) yield { kind: 'oversized', offset: 0, length: partsLength };
    else yield { kind: 'line', offset: 0, bytes: join(new Uint8Array(0), parts, partsLength) };
  }
}

function join(head: Uint8Array, rest: readonly Uint8Array[], length: number): Uint8Array {
  if (rest.length === 0) return head;
  const out = new Uint8Array(length);
  out.set(head, 0);
  let at = head.length;
  for (const part of rest) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
