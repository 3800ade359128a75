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
/** Below this span a forward read is cheaper than more probes. */
const LINEAR_SPAN = 64 * 1024;
const LF = 0x0a;

/**
 * Finds where a forward read of an event log must start to meet the first record with `seq >= target` (spec §15.6,
 * TJ-LIVE-004): the byte offset of a line start such that every record that starts before it has a smaller `seq`.
 *
 * A writer assigns each record the previous seq + 1 (TJ-EVENT-003), so seq grows with the byte offset and the log is
 * its own index: the search bisects the byte range, reading at each probe the first complete line after the probe
 * point and its `seq`, and costs O(log size) reads of one window, whatever the log's length. A probe that finds no
 * parseable record (damage, a line longer than the window) moves the upper bound only, so the answer may be earlier
 * than needed, never later: the caller's forward read, which skips `seq < target`, stays exact.
 */
export async function seekEventSeq(target: number, options: SeekEventSeqOptions): Promise<number> {
  const { source, size } = options;
  const window = Math.max(1024, options.windowBytes ?? DEFAULT_WINDOW);
  const buffer = new Uint8Array(window);
  let lo = 0;
  let hi = size;
  while (hi - lo > LINEAR_SPAN) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const probe = await firstRecordAfter(source, mid, hi, buffer);
    if (probe === null || probe.seq >= target) hi = mid;
    else lo = probe.lineStart;
  }
  return lo;
}

/** The first complete line starting after `from` (and before `end`) that parses to an object with an integer seq. */
async function firstRecordAfter(
  source: JournalSource,
  from: number,
  end: number,
  buffer: Uint8Array,
): Promise<{ lineStart: number; seq: number } | null> {
  const length = Math.min(buffer.length, end - from);
  const read = await readFully(source, buffer, length, from);
  const bytes = buffer.subarray(0, read);
  let lf = bytes.indexOf(LF);
  const decoder = new TextDecoder('utf-8', { fatal: false });
  while (lf >= 0) {
    const start = lf + 1;
    const next = bytes.indexOf(LF, start);
    if (next < 0) return null;
    const seq = seqOf(decoder.decode(bytes.subarray(start, next)));
    if (seq !== null) return { lineStart: from + start, seq };
    lf = next;
  }
  return null;
}

function seqOf(line: string): number | null {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const seq = (value as { seq?: unknown }).seq;
    return typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : null;
  } catch {
    return null;
  }
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
