import { ReaderError } from '../errors.js';
import { trailingNulCount } from './space.js';

/** Default line-size limit: 16 MiB, counted without the LF (spec TJ-FRAME-031). */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** A committed line: the bytes before its LF, where it starts, and its 1-based number. */
export interface CommittedLine {
  readonly kind: 'line';
  /** 1-based line number. */
  readonly number: number;
  /** 0-based byte offset of the line's first byte in the file. */
  readonly offset: number;
  /** The line's bytes without the LF (a CR before it is still there). A view: copy it to keep it. */
  readonly bytes: Uint8Array;
}

/** A committed line over the size limit: skipped without being buffered (spec TJ-FRAME-032). */
export interface OversizedLine {
  readonly kind: 'oversized';
  /** 1-based line number. */
  readonly number: number;
  /** 0-based byte offset of the line's first byte. */
  readonly offset: number;
  /** Length of the line in bytes, without the LF. */
  readonly length: number;
}

/**
 * Bytes after the last LF (spec TJ-FRAME-003): never a record. It ends at the last byte that is not NUL: the NUL bytes
 * after it are pre-allocated space (spec §3.8, TJ-FRAME-030, TJ-FRAME-036).
 */
export interface TornTail {
  /** 0-based byte offset of the first torn byte. */
  readonly offset: number;
  /** Number of torn bytes, without the pre-allocated space after them. */
  readonly length: number;
}

/**
 * Splits a byte stream into committed lines on LF only (TJ-FRAME-001), chunk by chunk. It holds at most one partial
 * line, and stops holding it once it passes the size limit, so memory stays bounded by the limit whatever the input.
 * Synchronous and allocation-light: callers feed chunks from any source and get every complete line of each chunk
 * in one array, with no promise per line.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  #pending: Uint8Array[] = [];
  #pendingLength = 0;
  #skipping = false;
  // NUL bytes at the end of the partial line, counted even once it is no longer held: when the stream ends there,
  // they are pre-allocated space, not torn bytes (TJ-FRAME-036).
  #trailingNuls = 0;
  #lineStart = 0;
  #lineNumber = 0;
  #position = 0;

  /**
   * @param maxLineBytes the line-size limit in bytes, without the LF.
   * @param startOffset file offset of the first byte fed (the start of a line), so offsets stay file offsets.
   */
  constructor(maxLineBytes: number = DEFAULT_MAX_LINE_BYTES, startOffset = 0) {
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1) {
      throw new ReaderError('invalid_option', `maxLineBytes must be a positive integer, got ${String(maxLineBytes)}`);
    }
    if (!Number.isSafeInteger(startOffset) || startOffset < 0) {
      throw new ReaderError('invalid_option', `startOffset must be a non-negative integer, got ${String(startOffset)}`);
    }
    this.#maxLineBytes = maxLineBytes;
    this.#lineStart = startOffset;
    this.#position = startOffset;
  }

  /** Feeds the next chunk; returns the lines it completed. The chunk must not be modified afterwards. */
  push(chunk: Uint8Array): (CommittedLine | OversizedLine)[] {
    const out: (CommittedLine | OversizedLine)[] = [];
    let from = 0;
    for (let lf = chunk.indexOf(0x0a, from); lf >= 0; lf = chunk.indexOf(0x0a, from)) {
      const length = this.#pendingLength + (lf - from);
      this.#lineNumber += 1;
      if (this.#skipping || length > this.#maxLineBytes) {
        out.push({ kind: 'oversized', number: this.#lineNumber, offset: this.#lineStart, length });
      } else {
        const bytes =
          this.#pending.length === 0
            ? chunk.subarray(from, lf)
            : concat([...this.#pending, chunk.subarray(from, lf)], length);
        out.push({ kind: 'line', number: this.#lineNumber, offset: this.#lineStart, bytes });
      }
      this.#pending = [];
      this.#pendingLength = 0;
      this.#skipping = false;
      this.#trailingNuls = 0;
      this.#lineStart = this.#position + lf + 1;
      from = lf + 1;
    }
    const rest = chunk.length - from;
    if (rest > 0) {
      this.#pendingLength += rest;
      const nuls = trailingNulCount(chunk, from);
      this.#trailingNuls = nuls === rest ? this.#trailingNuls + rest : nuls;
      if (this.#skipping || this.#pendingLength > this.#maxLineBytes) {
        this.#skipping = true;
        this.#pending = [];
      } else {
        this.#pending.push(chunk.subarray(from));
      }
    }
    this.#position += chunk.length;
    return out;
  }

  /**
   * File offset where the bytes fed so far end, not counting the NUL bytes after the last LF or the last other byte:
   * once the stream has ended, where the pre-allocated space starts, which is where a reader following the file
   * resumes (TJ-FRAME-037).
   */
  get dataEnd(): number {
    return this.#position - this.#trailingNuls;
  }

  /**
   * Ends the stream; returns the torn tail, if bytes other than NUL follow the last LF. The NUL run that ends the
   * stream is pre-allocated space and not part of it (TJ-FRAME-030, TJ-FRAME-036).
   */
  end(): TornTail | undefined {
    const length = this.#pendingLength - this.#trailingNuls;
    const tail = length > 0 ? { offset: this.#lineStart, length } : undefined;
    this.#pending = [];
    this.#pendingLength = 0;
    return tail;
  }
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
