import { Buffer } from 'node:buffer';
import { parseJsonText } from '../framing/parse-line-text.js';
import type { JournalSource } from '../framing/read-journal.js';

/** Options of {@link seekEventSeq}. */
export interface SeekEventSeqOptions {
  /** Where the bytes come from (positional reads). */
  readonly source: JournalSource;
  /** Bytes of the file to search: its size, or the end of its committed part. */
  readonly size: number;
  /** Largest window read at one probe; lines longer than it are stepped over. 256 KiB by default. */
  readonly windowBytes?: number;
}

const DEFAULT_WINDOW = 256 * 1024;
/** Below this span a forward read is cheaper than more probes; also the first step back from the end. */
const LINEAR_SPAN = 64 * 1024;
/** A probe reads this much first, and twice as much each time it found no complete line, up to the window. */
const FIRST_PROBE_BYTES = 4096;
const LF = 0x0a;

/**
 * Finds where a forward read of an event log must start to meet the first record with `seq >= target` (spec §15.6,
 * TJ-LIVE-004): the byte offset of a line start such that every record that starts before it has a smaller `seq`.
 *
 * A writer assigns each record the previous seq + 1 (TJ-EVENT-003), so seq grows with the byte offset and the log is
 * its own index. The search first steps back from the end, 64 KiB, then twice as far each time, until a record before
 * the target is found, and then bisects what is left, reading at each probe the first complete line after the probe
 * point and its `seq`: a target near the end (a subscriber reconnecting a little behind) costs O(log distance from
 * the end) probes, and any target O(log size), whatever the log's length. A probe reads 4 KiB, and more only for a
 * longer line. A probe that finds no parseable record (damage, pre-allocated space, a line longer than the window)
 * moves the upper bound only, so the answer may be earlier than needed, never later: the caller's forward read, which
 * skips `seq < target`, stays exact.
 *
 * The last 64 KiB are read at once and bisected by line, parsing the seq of a few lines only: the answer is then the
 * line right after the last record before the target, unless a line too long for the window hides it. Answering the
 * start of those 64 KiB made every reconnect parse and validate every record of them before the target, only to skip
 * them (issue 39).
 */
export async function seekEventSeq(target: number, options: SeekEventSeqOptions): Promise<number> {
  return (await findEventSeq(target, options)).offset;
}

/** Where {@link findEventSeq} found the target's line, and the bytes from there that its last read holds. */
export interface FoundEventSeq {
  /** What {@link seekEventSeq} answers. */
  readonly offset: number;
  /** The bytes at `offset` that the search read last (up to the end of that read; maybe none): a forward read's start. */
  readonly following: Uint8Array;
}

/**
 * {@link seekEventSeq}, with the bytes after the answer that its last read holds: a reconnect a little behind finds
 * its line in the one 64 KiB read of the search's first step, and a forward read that starts with those bytes reads
 * the log once, not twice (issue 39).
 */
export async function findEventSeq(
  target: number,
  options: SeekEventSeqOptions,
  readAlready?: BytesRead,
): Promise<FoundEventSeq> {
  const { source, size } = options;
  const probe = new Probe(source, Math.max(1024, options.windowBytes ?? DEFAULT_WINDOW), readAlready);
  let lo = 0;
  let hi = size;
  // Back from the end, in growing steps, while the records found are at or past the target.
  for (let step = LINEAR_SPAN; hi - lo > LINEAR_SPAN; step *= 2) {
    const at = Math.max(lo, hi - step);
    // The first step reads all it steps over: a target in the last 64 KiB (a client reconnecting a little behind) is
    // then found in those bytes without reading them again.
    const found = await probe.firstRecordAfter(at, hi, step === LINEAR_SPAN ? hi - at : FIRST_PROBE_BYTES);
    if (found !== null && found.seq < target) {
      lo = found.lineStart;
      break;
    }
    hi = at;
  }
  while (hi - lo > LINEAR_SPAN) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const found = await probe.firstRecordAfter(mid, hi);
    if (found === null || found.seq >= target) hi = mid;
    else lo = found.lineStart;
  }
  const offset = await probe.lineOf(target, lo, hi, size);
  return { offset, following: probe.bytesFrom(offset) };
}

/**
 * Bytes a caller read from the source at `position` a moment ago, committed lines up to the search's `size` (the
 * search looks at nothing past it): the search reads none of them again. Its own buffer from then on, never written to.
 */
export interface BytesRead {
  readonly position: number;
  readonly bytes: Buffer;
}

/** Positional reads of the first record after a point, into a buffer that grows only for long lines. */
class Probe {
  readonly #source: JournalSource;
  readonly #window: number;
  // A Buffer, not a bare Uint8Array: its indexOf is a native search, several times faster than a Uint8Array's at
  // finding the line ends of a 64 KiB read (bench/results/history.md, "Against Redis and PostgreSQL, the runs of
  // 2026-11-29 morning"). Not zero-filled: only the bytes read are ever looked at.
  #buffer: Buffer = Buffer.allocUnsafe(FIRST_PROBE_BYTES);
  /** Where the bytes in the buffer were read from, and how many were read. */
  #bufferAt = -1;
  #bufferLength = 0;
  /** Bytes read before the search began, answered from where a read falls within them. */
  readonly #readAlready: BytesRead | undefined;
  /** Whether the buffer is (a view of) those bytes, which a read must not overwrite. */
  #borrowed = false;
  readonly #decoder = new TextDecoder('utf-8', { fatal: false });

  constructor(source: JournalSource, window: number, readAlready?: BytesRead) {
    this.#source = source;
    this.#window = window;
    this.#readAlready = readAlready;
  }

  /**
   * Within `[lo, hi]` (`lo` a line start or 0; every line starting after `hi` holds `seq >= target` or no record), the
   * start of the line after the last record with `seq < target`: one read from `lo` through the first line start past
   * `hi`, then a bisection over its lines. A line that does not end in what was read counts as at or past the target,
   * so the answer is never later than that record.
   */
  async lineOf(target: number, lo: number, hi: number, size: number): Promise<number> {
    let extra = FIRST_PROBE_BYTES;
    let bytes: Buffer;
    for (;;) {
      const length = Math.min(size - lo, hi - lo + extra);
      let read: number;
      if (this.#bufferAt >= 0 && this.#bufferAt <= lo && this.#bufferAt + this.#bufferLength >= lo + length) {
        bytes = this.#buffer.subarray(lo - this.#bufferAt, lo - this.#bufferAt + length);
        read = length;
      } else {
        read = await this.#read(length, lo);
        bytes = this.#buffer.subarray(0, read);
      }
      // Enough when a line starts past `hi`, or when there is nothing more to read or that may be read.
      if (bytes.lastIndexOf(LF) >= hi - lo || read < length || length >= size - lo || extra >= this.#window) break;
      extra *= 2;
    }
    const starts = [0];
    for (let lf = bytes.indexOf(LF); lf >= 0 && lf + 1 < bytes.length; lf = bytes.indexOf(LF, lf + 1))
      starts.push(lf + 1);
    // Whether the first record at or after line `i` is at or past the target (true too when there is none, or when a
    // line before it does not end in the bytes read): false for every line before the answer, true from it on.
    const atOrPast = (i: number): boolean => {
      for (let k = i; k < starts.length; k += 1) {
        const start = starts[k] as number;
        const end = bytes.indexOf(LF, start);
        if (end < 0) return true;
        const seq = seqOf(this.#decoder.decode(bytes.subarray(start, end)));
        if (seq !== null) return seq >= target;
      }
      return true;
    };
    let low = 0;
    let high = starts.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (atOrPast(mid)) high = mid;
      else low = mid + 1;
    }
    return lo + (low < starts.length ? (starts[low] as number) : bytes.length);
  }

  /** The bytes of the last read from `position` on (none when it did not reach `position`); the probe reads no more. */
  bytesFrom(position: number): Uint8Array {
    const start = position - this.#bufferAt;
    if (this.#bufferAt < 0 || start < 0 || start > this.#bufferLength) return new Uint8Array(0);
    return this.#buffer.subarray(start, this.#bufferLength);
  }

  /** Reads `length` bytes at `position` into the buffer (grown when needed) and remembers where they came from. */
  async #read(length: number, position: number): Promise<number> {
    const known = this.#readAlready;
    if (known !== undefined && position >= known.position && position + length <= known.position + known.bytes.length) {
      const start = position - known.position;
      this.#buffer = known.bytes.subarray(start, start + length);
      this.#borrowed = true;
      this.#bufferAt = position;
      this.#bufferLength = length;
      return length;
    }
    if (this.#borrowed || this.#buffer.length < length) {
      this.#buffer = Buffer.allocUnsafe(Math.max(length, FIRST_PROBE_BYTES));
      this.#borrowed = false;
    }
    this.#bufferAt = -1;
    const read = await readFully(this.#source, this.#buffer, length, position);
    this.#bufferAt = position;
    this.#bufferLength = read;
    return read;
  }

  /**
   * The first complete line starting after `from` (and ending before `end`) that parses to an object with an integer
   * seq, looked for in `firstRead` bytes (4 KiB unless told), then in twice as much while no such line was complete,
   * up to the window.
   */
  async firstRecordAfter(
    from: number,
    end: number,
    firstRead = FIRST_PROBE_BYTES,
  ): Promise<{ lineStart: number; seq: number } | null> {
    let length = Math.min(firstRead, this.#window, end - from);
    for (;;) {
      const read = await this.#read(length, from);
      const bytes = this.#buffer.subarray(0, read);
      let lf = bytes.indexOf(LF);
      while (lf >= 0) {
        const start = lf + 1;
        const next = bytes.indexOf(LF, start);
        if (next < 0) break;
        const seq = seqOf(this.#decoder.decode(bytes.subarray(start, next)));
        if (seq !== null) return { lineStart: from + start, seq };
        lf = next;
      }
      // No complete line with a seq in what was read: read more, unless that was all there is or may be read.
      if (read < length || length >= this.#window || length >= end - from) return null;
      length = Math.min(length * 2, this.#window, end - from);
    }
  }
}

function seqOf(line: string): number | null {
  const value = parseJsonText(line);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const seq = (value as { seq?: unknown }).seq;
  return typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : null;
}

async function readFully(source: JournalSource, buffer: Uint8Array, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const n = await source.read(buffer, done, length - done, position + done);
    if (n <= 0) break;
    done += n;
  }
  return done;
}
