import { ReaderError } from '../errors.js';
import { type BackwardLine, readLinesBackward } from '../event/read-lines-backward.js';
import { seekEventSeq } from '../event/seek-event-seq.js';
import { DEFAULT_MAX_LINE_BYTES } from '../framing/line-splitter.js';
import { type JournalItem, type JournalSource, readJournal } from '../framing/read-journal.js';
import type { JournalCursor, JournalReader, JournalReadOptions } from './record-store.js';

/** How a {@link LineViewReader} reaches the lines of its journal. */
export interface LineView extends JournalSource {
  /** The cursor after the last committed line, now. */
  end(): Promise<number>;
  /** Releases what the view holds. */
  close(): Promise<void>;
}

const CHUNK_BYTES = 64 * 1024;

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
    const source = bounded(this, to);
    yield* readJournal(this.name, {
      source,
      startOffset: options.from ?? 0,
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

/** A source that reads nothing at or after `to`: a read that began at one end is not changed by later appends. */
function bounded(source: JournalSource, to: number): JournalSource {
  return {
    read: (buffer, offset, length, position) =>
      position >= to ? Promise.resolve(0) : source.read(buffer, offset, Math.min(length, to - position), position),
  };
}

function closedError(name: string): ReaderError {
  return new ReaderError('reader_closed', `the reader of ${name} is closed`, { file: name });
}
