import { Buffer } from 'node:buffer';
import { ReaderError } from '../errors.js';
import { type BackwardLine, readLinesBackward } from '../event/read-lines-backward.js';
import { type BytesRead, findEventSeq, seekEventSeq } from '../event/seek-event-seq.js';
import { DEFAULT_MAX_LINE_BYTES } from '../framing/line-splitter.js';
import { type JournalItem, type JournalSource, readJournal } from '../framing/read-journal.js';
import type { JournalCursor, JournalReader, JournalReadOptions, SeqReadOptions } from './record-store.js';

/** How a {@link LineViewReader} reaches the lines of its journal. */
export interface LineView extends JournalSource {
  /** The cursor after the last committed line, now. */
  end(): Promise<number>;
  /** Releases what the view holds. */
  close(): Promise<void>;
  /**
   * A positional read answered at once, where the backend has one that costs less than an asynchronous trip (a file's
   * pages cached by the kernel): what the seek and the first read of {@link LineViewReader.recordsFromSeq} use for the
   * last {@link TAIL_NOW_BYTES} of the journal, which a writer has just written.
   */
  readNow?(buffer: Uint8Array, offset: number, length: number, position: number): number;
}

const CHUNK_BYTES = 64 * 1024;
const LF = 0x0a;

/**
 * How far back from the end a read is made at once through {@link LineView.readNow}: the tail a reconnect a little
 * behind reads, just written and so in the page cache. A trip through libuv's thread pool cost several times the read
 * of those 64 KiB from the cache (bench/results/history.md, "Against Redis and PostgreSQL, the runs of 2026-11-29
 * morning"); a read further back may wait for the disk, and stays asynchronous so it never holds the event loop.
 */
const TAIL_NOW_BYTES = 64 * 1024;

/**
 * @internal The {@link JournalReader} of a backend that can read its journal's committed lines as one byte stream
 * (each line with its LF, at its cursor): every method is the codec's own algorithm over that view, so a backend
 * provides positional reads and the end, nothing more. The file store and the simulated store are such backends.
 */
export class LineViewReader implements JournalReader {
  readonly name: string;
  readonly #view: LineView;
  #closed = false;

  constructor(name: string, view: LineView) {
    this.name = name;
    this.#view = view;
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    if (this.#closed) return Promise.reject(closedError(this.name));
    return this.#view.read(buffer, offset, length, position);
  }

  end(): Promise<JournalCursor> {
    if (this.#closed) return Promise.reject(closedError(this.name));
    return this.#view.end();
  }

  async *records(options: JournalReadOptions = {}): AsyncGenerator<JournalItem[]> {
    const to = options.to ?? (await this.end());
    yield* this.#read(bounded(this, to), options.from ?? 0, options);
  }

  /**
   * The records from where {@link seekSeq} lands for `target` through `options.to`, the first of them from the bytes
   * the seek read last: a reconnect a little behind reads the log once (issue 39). A subclass with a seek of its own
   * (a database's index) seeks with it, and reads from there.
   */
  async *recordsFromSeq(target: number, options: SeqReadOptions = {}): AsyncGenerator<JournalItem[]> {
    const to = options.to ?? (await this.end());
    const tail = this.#tailNowOf(to);
    const linesEnd = linesEndIn(tail, to);
    const source = this.#tailNow(bounded(this, to), linesEnd - TAIL_NOW_BYTES, to);
    if (this.seekSeq !== LineViewReader.prototype.seekSeq) {
      yield* this.#read(source, await this.seekSeq(target, { to }), options);
      return;
    }
    // The search's first step reads the 64 KiB before the lines' end: when the lines end where the journal does (no
    // pre-allocated space), those are the bytes just read, and the search reads nothing.
    const found = await findEventSeq(target, { source, size: linesEnd }, tail);
    yield* this.#read(startingWith(source, found.offset, found.following), found.offset, options);
  }

  /**
   * The last {@link TAIL_NOW_BYTES} before `to`, read at once where the view can (undefined where it cannot): where
   * the lines end is found in them (see {@link linesEndIn}), and a seek answered within them reads nothing more. A
   * buffer of its own for each read: two replays of one reader may interleave.
   */
  #tailNowOf(to: number): BytesRead | undefined {
    const readNow = this.#view.readNow;
    if (readNow === undefined || this.#closed || to <= 0) return undefined;
    const length = Math.min(TAIL_NOW_BYTES, to);
    const bytes = Buffer.allocUnsafe(length);
    const read = readNow.call(this.#view, bytes, 0, length, to - length);
    return { position: to - length, bytes: bytes.subarray(0, read) };
  }

  /** `source`, with its reads from `from` to `to` made at once where the view can. */
  #tailNow(source: JournalSource, from: number, to: number): JournalSource {
    const readNow = this.#view.readNow?.bind(this.#view);
    if (readNow === undefined) return source;
    return {
      read: (buffer, offset, length, position) => {
        if (position < from || position >= to) return source.read(buffer, offset, length, position);
        if (this.#closed) return Promise.reject(closedError(this.name));
        try {
          return Promise.resolve(readNow(buffer, offset, Math.min(length, to - position), position));
        } catch (error) {
          return Promise.reject(error);
        }
      },
    };
  }

  #read(source: JournalSource, from: number, options: SeqReadOptions): AsyncGenerator<JournalItem[]> {
    return readJournal(this.name, {
      source,
      startOffset: from,
      chunkBytes: CHUNK_BYTES,
      ...(options.mode === undefined ? {} : { mode: options.mode }),
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    });
  }

  async seekSeq(target: number, options: { readonly to?: JournalCursor } = {}): Promise<JournalCursor> {
    return seekEventSeq(target, { source: this, size: options.to ?? (await this.end()) });
  }

  async *readBackward(
    options: { readonly to?: JournalCursor; readonly maxLineBytes?: number } = {},
  ): AsyncGenerator<BackwardLine> {
    const to = options.to ?? (await this.end());
    yield* readLinesBackward(this, to, CHUNK_BYTES, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#view.close();
  }
}

/**
 * Where the lines before `to` end, given the bytes read at once before it (`to` without them): after the last LF in
 * them. A journal being written ends in pre-allocated space (NULs, up to 64 KiB, TJ-DUR-035), which the end includes:
 * a seek from that end spent its first read on NULs, and the records a reconnect wants lay before the tail read at
 * once. Bytes after the last LF hold no line (pre-allocated space, or a line not yet whole), so a seek within the
 * lines answers as one within all the bytes would. No LF in those bytes (a line longer than them): `to`.
 */
function linesEndIn(tail: BytesRead | undefined, to: number): number {
  if (tail === undefined) return to;
  const lf = tail.bytes.lastIndexOf(LF);
  return lf < 0 ? to : tail.position + lf + 1;
}

/** A source that reads nothing at or after `to`: a read that began at one end is not changed by later appends. */
function bounded(source: JournalSource, to: number): JournalSource {
  return {
    read: (buffer, offset, length, position) =>
      position >= to ? Promise.resolve(0) : source.read(buffer, offset, Math.min(length, to - position), position),
  };
}

/**
 * `source`, whose first read at `at` is answered with `bytes` (when there are any): bytes read from it a moment ago.
 * Only that first read: a line read again (one that starts with NUL, which a writer may have filled since) is read
 * from the source.
 */
function startingWith(source: JournalSource, at: number, bytes: Uint8Array): JournalSource {
  let first = bytes.length > 0;
  return {
    read: (buffer, offset, length, position) => {
      if (first && position === at) {
        first = false;
        const n = Math.min(length, bytes.length);
        buffer.set(bytes.subarray(0, n), offset);
        return Promise.resolve(n);
      }
      first = false;
      return source.read(buffer, offset, length, position);
    },
  };
}

function closedError(name: string): ReaderError {
  return new ReaderError('reader_closed', `the reader of ${name} is closed`, { file: name });
}
