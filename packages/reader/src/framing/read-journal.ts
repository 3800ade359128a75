import { type Finding, makeFinding, type RecordValidation, validateRecord } from '@turnjournal/schema';
import { ReaderError } from '../errors.js';
import { type ChunkRead, closeFd, readAhead, readAtSync, readNow } from '../file/fd-reads.js';
import { openRegularSync } from '../file/open-regular.js';
import { decodeLine } from './decode-line.js';
import { type CommittedLine, DEFAULT_MAX_LINE_BYTES, LineSplitter, type OversizedLine } from './line-splitter.js';
import { safeParsePlainRecord, Utf8Failures } from './plain-record.js';
import { WriterViolations } from './writer-violations.js';

/** What a reader does after damage (spec §3.4): skip it, stop before it, or fail. */
export type RecoveryMode = 'tolerant' | 'prefix' | 'strict';

/** The recovery modes, default first. */
export const RECOVERY_MODES: readonly RecoveryMode[] = ['tolerant', 'prefix', 'strict'];

/** Options of {@link readJournal}. */
export interface ReadJournalOptions {
  /** Recovery mode; `tolerant` by default (TJ-FRAME-020). */
  readonly mode?: RecoveryMode;
  /** Line-size limit in bytes without the LF; 16 MiB by default (TJ-FRAME-031). */
  readonly maxLineBytes?: number;
  /**
   * Bytes read per system call; 128 KiB by default (1 MiB in strict mode). Records come in batches of about 16 KiB of
   * lines (one batch per read in strict mode and from a `source`): a batch lives until the caller moves on, so small
   * batches are what bound memory (spec TJ-FRAME-033).
   */
  readonly chunkBytes?: number;
  /**
   * File offset to start at; it must be the first byte of a line (the byte after an LF). Nothing before it is read,
   * which is what lets event-log recovery cost follow the tail (spec §15.2). Offsets stay file offsets; line numbers
   * count from the first line read, so findings carry no line number when this is above 0.
   */
  readonly startOffset?: number;
  /**
   * Whether `tolerant` mode salvages records glued after a torn head (spec §3.5, a SHOULD); true by default. A
   * record-level validator turns it off to report each damaged line as it is. Other modes never salvage.
   */
  readonly salvage?: boolean;
  /**
   * Where the bytes come from; by default the file at `path` is opened. A writer passes the descriptor it already
   * holds (through its file-system layer), so that it reads exactly what it appends to; `path` then only names the
   * file in findings.
   */
  readonly source?: JournalSource;
}

/** A readable byte source for {@link readJournal}: positional reads, like `pread`. */
export interface JournalSource {
  /** Reads up to `length` bytes into `buffer` at `offset` from `position`; returns the bytes read (0 at the end). */
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
}

/** One record read from a journal file, with where it was and what the v1 schemas say of it. */
export interface JournalRecord {
  /** 1-based line number (counted from `startOffset` when the read started part-way). */
  readonly line: number;
  /** 0-based byte offset of the line. */
  readonly offset: number;
  /** The parsed object; unknown members are kept as they are (TJ-COMPAT-003). */
  readonly value: Record<string, unknown>;
  /** The record's bytes without BOM, CR and LF. A view into the read buffer: copy it to keep it. */
  readonly bytes: Uint8Array;
  /** File offset of the first byte of `bytes` (after a BOM, or after the discarded head of a glued line). */
  readonly bytesOffset: number;
  /** The schema verdict: valid, unknown, extension, unsupported_version or invalid. */
  readonly validation: RecordValidation;
  /** True when the record was salvaged from a glued line (spec §3.5). */
  readonly salvaged: boolean;
}

/** An item of a journal read: a record or a finding, in file order. */
export type JournalItem =
  | { readonly kind: 'record'; readonly record: JournalRecord }
  | { readonly kind: 'finding'; readonly finding: Finding };

// Large enough that a large file costs few trips through the thread pool (each with a buffer and a promise), small
// enough that the buffers a caller's batches still hold stay a small part of memory: 256 KiB read a little faster but
// put the peak RSS of a 1 GiB read near the 100 MB target (bench/results/history.md, "What was changed in the reader
// to get here", step 9).
const DEFAULT_CHUNK_BYTES = 128 * 1024;
/** Bytes of lines per batch (outside strict mode and a caller's source). */
const BATCH_BYTES = 16 * 1024;
/** Default `chunkBytes` in strict mode, which reads as the reader always did. */
const STRICT_CHUNK_BYTES = 1024 * 1024;
/** Largest synchronous first read of a file. */
const SMALL_READ_BYTES = 64 * 1024;
/** Size of the read after a short one, which finds the end of the file unless the file grew meanwhile. */
const PROBE_BYTES = 1024;
/** A read that found the end of the file. */
const END: ChunkRead = { chunk: Buffer.alloc(0), length: 0, bytesRead: 0 };

/**
 * Reads a JSONL journal file as a stream (TJ-FRAME-033) and yields its records and framing findings in file order, in
 * batches (about 16 KiB of lines each) so a caller pays no promise per line. Applies every framing rule of spec §3 and
 * the recovery mode: `tolerant` reports damage, salvages glued records and reads on; `prefix` reports the first damage
 * and stops; `strict` throws {@link ReaderError} at the first damage or invalid record. A torn tail is never
 * damage, and the run of NUL bytes that ends the file after its last line (or after a torn tail) is pre-allocated
 * space a writer reserved: no record and no finding, in any mode (spec §3.8, TJ-FRAME-036).
 * Record-level findings (`invalid_record`, `unsupported_version`, `unknown_record`) come with the records.
 */
export async function* readJournal(path: string, options: ReadJournalOptions = {}): AsyncGenerator<JournalItem[]> {
  const mode = options.mode ?? 'tolerant';
  // Strict mode, and a caller's source, are read as they always were: one `chunkBytes` read at a time, on demand, one
  // batch per read (1 MiB by default in strict mode). A strict read that fails drops the batch it was building, so
  // which records came before the error depends on where reads begin; keeping them where they were keeps that answer.
  const legacy = mode === 'strict' || options.source !== undefined;
  const chunkBytes = options.chunkBytes ?? (mode === 'strict' ? STRICT_CHUNK_BYTES : DEFAULT_CHUNK_BYTES);
  const startOffset = options.startOffset ?? 0;
  const splitter = new LineSplitter(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, startOffset);
  const exactLines = startOffset === 0;
  const salvage = mode === 'tolerant' && (options.salvage ?? true);
  const writerViolations = new WriterViolations();
  const utf8Failures = new Utf8Failures();
  // Otherwise its own file the reader reads in two ways. On a regular file, the first read and a read after a short
  // one (the end of the file, most likely) are synchronous and sized to what the file holds: most journals of a store
  // are a few kilobytes, and for them a trip through the thread pool per system call costs more than the reading, and
  // a large buffer per file is garbage to collect. Every other read is asynchronous and runs ahead: the next chunk is
  // read in the thread pool while this one's lines are decoded. The lines of a read come in batches of about
  // BATCH_BYTES: a batch, and the records it holds, lives until the caller moves on, so small batches bound memory.
  // Only a regular file is ever read (TJ-FAM-024): a FIFO, socket or device throws a `special_file` finding here.
  const opened = options.source === undefined ? openRegularSync(path) : undefined;
  const fd = opened?.fd;
  let ahead: Promise<ChunkRead> | undefined;
  try {
    const stats = opened?.stats;
    const regular = stats?.isFile() === true;
    let next: ChunkRead | Promise<ChunkRead>;
    // The size when the read began: a short read that reaches it is the end of the file, with no read to confirm.
    const size = regular ? (stats?.size ?? 0) : Number.POSITIVE_INFINITY;
    if (fd === undefined) next = readSource(options.source as JournalSource, startOffset, chunkBytes);
    else if (legacy || !regular) next = ahead = readAhead(fd, startOffset, chunkBytes);
    else {
      // One byte more than the file holds, so that a file read whole ends in a short read.
      const rest = Math.max(0, size - startOffset) + 1;
      next = readNow(fd, startOffset, Math.min(chunkBytes, SMALL_READ_BYTES, rest));
    }
    let batchEnd = startOffset + BATCH_BYTES;
    // Lines found by reading a line again (settleLine) that the splitter did not count: added to its line numbers.
    let lineShift = 0;
    const single: (CommittedLine | OversizedLine)[] = [];
    for (let position = startOffset; ; ) {
      const { chunk, bytesRead, length } = await next;
      ahead = undefined;
      if (bytesRead === 0) break;
      position += bytesRead;
      if (fd !== undefined && !legacy) {
        const short = bytesRead < length;
        next =
          short && position >= size
            ? END
            : regular && short
              ? readNow(fd, position, Math.min(chunkBytes, PROBE_BYTES))
              : readAhead(fd, position, chunkBytes);
        if (next instanceof Promise) ahead = next;
      }
      let batch: JournalItem[] = [];
      let stop = false;
      for (const split of splitter.push(chunk.subarray(0, bytesRead))) {
        // A line that starts with NUL may be pre-allocated space that a writer filled between two reads of it (or
        // during one): read once more before it is called damage (see settleLine). Damage stays damage.
        // One array reused for the common case, so that a line costs no allocation here.
        single[0] = split;
        const settled =
          split.kind === 'line' && split.bytes[0] === 0 ? await settleLine(split, fd, options.source) : single;
        for (const found of settled) {
          const line = lineShift === 0 ? found : { ...found, number: found.number + lineShift };
          if (!legacy) {
            // A line whose LF lies past the batch's block starts the next batch.
            const lf = line.offset + (line.kind === 'line' ? line.bytes.length : line.length);
            if (lf >= batchEnd) {
              if (batch.length > 0) yield batch;
              batch = [];
              batchEnd = startOffset + (Math.floor((lf - startOffset) / BATCH_BYTES) + 1) * BATCH_BYTES;
            }
          }
          if (line.kind === 'line') {
            const violations = writerViolations.check(line, path, exactLines);
            if (violations !== undefined) for (const finding of violations) batch.push({ kind: 'finding', finding });
          }
          stop = readLine(line, path, mode, exactLines, salvage, utf8Failures, batch);
          if (stop) break;
        }
        lineShift += settled.length - 1;
        if (stop) break;
      }
      if (batch.length > 0) yield batch;
      if (stop) return;
      if (fd === undefined) next = readSource(options.source as JournalSource, position, chunkBytes);
      else if (legacy) next = ahead = readAhead(fd, position, chunkBytes);
    }
    const tail = splitter.end();
    if (tail !== undefined) {
      const message = `${tail.length} byte(s) after the last LF are not a committed record and are ignored`;
      yield [
        {
          kind: 'finding',
          finding: makeFinding('torn_tail', message, { file: path, offset: tail.offset, length: tail.length }),
        },
      ];
    }
  } finally {
    // A read still running must end before its descriptor closes.
    if (ahead !== undefined) await ahead.catch(() => undefined);
    if (fd !== undefined) closeFd(fd);
  }
}

async function readSource(source: JournalSource, position: number, length: number): Promise<ChunkRead> {
  const chunk = Buffer.allocUnsafe(length);
  return { chunk, length, bytesRead: await source.read(chunk, 0, length, position) };
}

/**
 * The lines that the bytes of `line` hold when read again. A writer appends at the start of pre-allocated space
 * (spec §3.8, TJ-DUR-033) while a reader may be reading the file: bytes the reader read as NUL, before the append,
 * and the rest of the record with its LF, read after it, make a committed line that starts with NUL and was never in
 * the file (TJ-FRAME-028 would call it damage). Its bytes, read again at once, are what the file holds now, up to an
 * LF the reader has already seen: bytes that are not NUL never change, so that read agrees with every byte read
 * since. It may hold several lines when the writer appended several. A line the file really holds comes back as it
 * was, and stays damage. Rare (a line that starts with NUL), so one more positional read costs nothing in the common
 * case.
 */
async function settleLine(
  line: CommittedLine,
  fd: number | undefined,
  source: JournalSource | undefined,
): Promise<CommittedLine[]> {
  const length = line.bytes.length + 1;
  const again = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const n =
      fd === undefined
        ? await (source as JournalSource).read(again, filled, length - filled, line.offset + filled)
        : readAtSync(fd, again, filled, length - filled, line.offset + filled);
    if (n <= 0) break;
    filled += n;
  }
  // The file shrank or its LF moved (a repair, a replacement): the line as first read is all there is to report.
  if (filled < length || again[length - 1] !== 0x0a) return [line];
  const lines: CommittedLine[] = [];
  let start = 0;
  for (let lf = again.indexOf(0x0a); lf >= 0 && lf < length; lf = again.indexOf(0x0a, lf + 1)) {
    lines.push({
      kind: 'line',
      number: line.number + lines.length,
      offset: line.offset + start,
      bytes: again.subarray(start, lf),
    });
    start = lf + 1;
  }
  return lines;
}

/** Handles one line; returns true when the read must stop (prefix mode after damage). */
function readLine(
  line: CommittedLine | OversizedLine,
  file: string,
  mode: RecoveryMode,
  exactLines: boolean,
  salvage: boolean,
  utf8Failures: Utf8Failures,
  out: JournalItem[],
): boolean {
  const number = line.number;
  if (line.kind === 'oversized') {
    return damage(
      makeFinding('oversized_line', `line of ${line.length} bytes is over the line-size limit and was skipped`, {
        ...locate(file, line, exactLines),
        length: line.length,
      }),
      mode,
      out,
    );
  }
  // The common case first: a plain record line, decoded without result or location objects it would not use.
  const plain = safeParsePlainRecord(line, utf8Failures);
  if (typeof plain === 'object') {
    return addRecord(file, number, line.offset, exactLines, plain, line.bytes, line.offset, false, mode, out);
  }
  const decoded = decodeLine(line, salvage, plain);
  if (decoded.kind === 'record') {
    const bytesOffset = offsetOf(line, decoded.bytes);
    return addRecord(
      file,
      number,
      line.offset,
      exactLines,
      decoded.value,
      decoded.bytes,
      bytesOffset,
      false,
      mode,
      out,
    );
  }
  if (decoded.kind === 'blank') {
    out.push({
      kind: 'finding',
      finding: makeFinding('blank_line', 'blank line skipped', locate(file, line, exactLines)),
    });
    return false;
  }
  const region = decoded.nulRun === undefined ? {} : { offset: decoded.nulRun.offset, length: decoded.nulRun.length };
  if (decoded.salvaged !== undefined) {
    const { headLength } = decoded.salvaged;
    const finding =
      decoded.code === 'zero_filled_region'
        ? makeFinding('zero_filled_region', `${decoded.reason}; the record after it was salvaged`, {
            ...locate(file, line, exactLines),
            ...region,
          })
        : makeFinding(
            'glued_record',
            `a torn head of ${headLength} byte(s) was discarded and the record glued after it salvaged`,
            { ...locate(file, line, exactLines), length: headLength },
          );
    out.push({ kind: 'finding', finding });
    const { value, bytes } = decoded.salvaged;
    return addRecord(file, number, line.offset, exactLines, value, bytes, offsetOf(line, bytes), true, mode, out);
  }
  // A zero-filled region is located by its first NUL run (TJ-FRAME-028); other damage by the line's first byte.
  const finding = makeFinding(decoded.code, decoded.reason, { ...locate(file, line, exactLines), ...region });
  return damage(finding, mode, out);
}

// Where a line is, for its findings: without a line number when the read started part-way.
function locate(file: string, line: CommittedLine | OversizedLine, exactLines: boolean) {
  return exactLines ? { file, line: line.number, offset: line.offset } : { file, offset: line.offset };
}

// Decoded bytes are views into the line's bytes, so their distance from the line's start is their place in the file.
function offsetOf(line: CommittedLine, bytes: Uint8Array): number {
  if (bytes === line.bytes) return line.offset;
  return line.offset + (bytes.byteOffset - line.bytes.byteOffset);
}

function damage(finding: Finding, mode: RecoveryMode, out: JournalItem[]): boolean {
  if (mode === 'strict') throw ReaderError.fromFinding(finding);
  out.push({ kind: 'finding', finding });
  return mode === 'prefix';
}

// Scalars rather than an options object: this runs once per record.
function addRecord(
  file: string,
  line: number,
  offset: number,
  exactLines: boolean,
  value: Record<string, unknown>,
  bytes: Uint8Array,
  bytesOffset: number,
  salvaged: boolean,
  mode: RecoveryMode,
  out: JournalItem[],
): boolean {
  const validation = validateRecord(value);
  // Valid and extension records have no finding (see recordFinding): no location object is built for them.
  if (validation.status !== 'valid' && validation.status !== 'extension') {
    const where = exactLines ? { file, line, offset } : { file, offset };
    const finding = recordFinding(validation, where);
    if (finding !== undefined) {
      if (mode === 'strict' && finding.code === 'invalid_record') throw ReaderError.fromFinding(finding);
      out.push({ kind: 'finding', finding });
    }
  }
  out.push({ kind: 'record', record: { line, offset, value, bytes, bytesOffset, validation, salvaged } });
  return false;
}

/** The finding a schema verdict calls for, if any: invalid, unsupported version, or unknown (not extension) type. */
export function recordFinding(
  validation: RecordValidation,
  where: { file?: string; line?: number; offset?: number },
): Finding | undefined {
  switch (validation.status) {
    case 'invalid':
      return makeFinding(
        'invalid_record',
        validation.errors.map((e) => e.message).join('; ') || 'invalid record',
        where,
      );
    case 'unsupported_version':
      return makeFinding(
        'unsupported_version',
        `major version ${validation.version} is not supported; the record is skipped`,
        where,
      );
    case 'unknown': {
      const c = validation.classification;
      const what = c.family === 'none' || c.type === undefined ? 'a record with no type' : `record type "${c.type}"`;
      return makeFinding('unknown_record', `${what} is not defined by v1; ignored`, where);
    }
    default:
      return undefined;
  }
}
