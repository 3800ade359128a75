import { type FileHandle, open } from 'node:fs/promises';
import { type Finding, makeFinding, type RecordValidation, validateRecord } from '@turnjournal/schema';
import { JournalReadError } from '../errors.js';
import { decodeLine } from './decode-line.js';
import { type CommittedLine, DEFAULT_MAX_LINE_BYTES, LineSplitter, type OversizedLine } from './line-splitter.js';

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
  /** Bytes read per system call; 1 MiB by default. */
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

const DEFAULT_CHUNK_BYTES = 1024 * 1024;

/**
 * Reads a JSONL journal file as a stream (TJ-FRAME-033) and yields its records and framing findings in file order, in
 * batches (one per chunk read) so a caller pays no promise per line. Applies every framing rule of spec §3 and the
 * recovery mode: `tolerant` reports damage, salvages glued records and reads on; `prefix` reports the first damage and
 * stops; `strict` throws {@link JournalReadError} at the first damage or invalid record. A torn tail is never damage.
 * Record-level findings (`invalid_record`, `unsupported_version`, `unknown_record`) come with the records.
 */
export async function* readJournal(path: string, options: ReadJournalOptions = {}): AsyncGenerator<JournalItem[]> {
  const mode = options.mode ?? 'tolerant';
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  const startOffset = options.startOffset ?? 0;
  const splitter = new LineSplitter(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, startOffset);
  const exactLines = startOffset === 0;
  const salvage = mode === 'tolerant' && (options.salvage ?? true);
  const handle = options.source === undefined ? await open(path, 'r') : undefined;
  const source: JournalSource = options.source ?? {
    read: async (buffer, offset, length, position) =>
      (await (handle as FileHandle).read(buffer, offset, length, position)).bytesRead,
  };
  try {
    for (let position = startOffset; ; ) {
      const chunk = Buffer.allocUnsafe(chunkBytes);
      const bytesRead = await source.read(chunk, 0, chunkBytes, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const batch: JournalItem[] = [];
      let stop = false;
      for (const line of splitter.push(chunk.subarray(0, bytesRead))) {
        stop = readLine(line, path, mode, exactLines, salvage, batch);
        if (stop) break;
      }
      if (batch.length > 0) yield batch;
      if (stop) return;
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
    await handle?.close();
  }
}

/** Handles one line; returns true when the read must stop (prefix mode after damage). */
function readLine(
  line: CommittedLine | OversizedLine,
  file: string,
  mode: RecoveryMode,
  exactLines: boolean,
  salvage: boolean,
  out: JournalItem[],
): boolean {
  const where = exactLines ? { file, line: line.number, offset: line.offset } : { file, offset: line.offset };
  const number = line.number;
  if (line.kind === 'oversized') {
    return damage(
      makeFinding('oversized_line', `line of ${line.length} bytes is over the line-size limit and was skipped`, {
        ...where,
        length: line.length,
      }),
      mode,
      out,
    );
  }
  const decoded = decodeLine(line, salvage);
  if (decoded.kind === 'blank') {
    out.push({ kind: 'finding', finding: makeFinding('blank_line', 'blank line skipped', where) });
    return false;
  }
  if (decoded.kind === 'record') {
    return addRecord(
      {
        ...where,
        line: number,
        exactLines,
        value: decoded.value,
        bytes: decoded.bytes,
        bytesOffset: offsetOf(line, decoded.bytes),
        salvaged: false,
      },
      mode,
      out,
    );
  }
  const region = decoded.nulRun === undefined ? {} : { offset: decoded.nulRun.offset, length: decoded.nulRun.length };
  if (decoded.salvaged !== undefined) {
    const { headLength } = decoded.salvaged;
    const finding =
      decoded.code === 'zero_filled_region'
        ? makeFinding('zero_filled_region', `${decoded.reason}; the record after it was salvaged`, {
            ...where,
            ...region,
          })
        : makeFinding(
            'glued_record',
            `a torn head of ${headLength} byte(s) was discarded and the record glued after it salvaged`,
            { ...where, length: headLength },
          );
    out.push({ kind: 'finding', finding });
    return addRecord(
      {
        ...where,
        line: number,
        exactLines,
        value: decoded.salvaged.value,
        bytes: decoded.salvaged.bytes,
        bytesOffset: offsetOf(line, decoded.salvaged.bytes),
        salvaged: true,
      },
      mode,
      out,
    );
  }
  // A zero-filled region is located by its first NUL run (TJ-FRAME-028); other damage by the line's first byte.
  const finding = makeFinding(decoded.code, decoded.reason, { ...where, ...region });
  return damage(finding, mode, out);
}

// Decoded bytes are views into the line's bytes, so their distance from the line's start is their place in the file.
function offsetOf(line: CommittedLine, bytes: Uint8Array): number {
  return line.offset + (bytes.byteOffset - line.bytes.byteOffset);
}

function damage(finding: Finding, mode: RecoveryMode, out: JournalItem[]): boolean {
  if (mode === 'strict') throw new JournalReadError(finding);
  out.push({ kind: 'finding', finding });
  return mode === 'prefix';
}

function addRecord(
  record: {
    file: string;
    line: number;
    exactLines: boolean;
    offset: number;
    value: Record<string, unknown>;
    bytes: Uint8Array;
    bytesOffset: number;
    salvaged: boolean;
  },
  mode: RecoveryMode,
  out: JournalItem[],
): boolean {
  const validation = validateRecord(record.value);
  const where = record.exactLines
    ? { file: record.file, line: record.line, offset: record.offset }
    : { file: record.file, offset: record.offset };
  const finding = recordFinding(validation, where);
  if (finding !== undefined) {
    if (mode === 'strict' && finding.code === 'invalid_record') throw new JournalReadError(finding);
    out.push({ kind: 'finding', finding });
  }
  out.push({
    kind: 'record',
    record: {
      line: record.line,
      offset: record.offset,
      value: record.value,
      bytes: record.bytes,
      bytesOffset: record.bytesOffset,
      validation,
      salvaged: record.salvaged,
    },
  });
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
