import { ReaderError } from '../errors.js';
import type { JournalRecord } from '../framing/read-journal.js';
import { RepresentativeTable } from './representative-table.js';

/** Where a record's bytes are on disk, so it can be read again instead of being held in memory. */
export interface RecordLocation {
  /** The file. */
  readonly file: string;
  /** 1-based line number. */
  readonly line: number;
  /** File offset of the record's first byte (after a BOM or a discarded glued head). */
  readonly offset: number;
  /** Length of the record in bytes (without CR and LF). */
  readonly length: number;
}

/** The few fields of a turn record that reports and recovery use, with the content cut to an excerpt. */
export interface RecordSummary {
  /** `created_at`, epoch seconds. */
  readonly createdAt?: number;
  /** `stream_id`, when a string. */
  readonly streamId?: string;
  /** `reason` of an `interrupted` record. */
  readonly reason?: string;
  /** `assistant_message_index`, when a number. */
  readonly assistantMessageIndex?: number;
  /** At most 64 bytes of `content` (spec TJ-AUDIT-012). */
  readonly contentExcerpt?: string;
  /** True when `contentExcerpt` is shorter than the content. */
  readonly contentTruncated?: boolean;
  /** Number of attachments. */
  readonly attachments?: number;
}

/**
 * The record that represents one event name of a turn (spec §10.4): where it is and a small summary. The whole
 * record (content, attachments, unknown members) stays on disk and is read back with `loadRecord`, so deriving
 * a large journal holds a few dozen bytes per turn event rather than every message.
 */
export interface RepresentativeRecord {
  /** Where the record is. */
  readonly location: RecordLocation;
  /** What reports and recovery need without reading it again. */
  readonly summary: RecordSummary;
}

/** Builds the representative of a record just read. */
export function representativeOf(record: JournalRecord, file: string): RepresentativeRecord {
  // The one place that knows which fields a summary holds is the table TurnFold keeps them in.
  const table = new RepresentativeTable();
  table.set(0, record, file);
  return table.get(0);
}

/** The error for a representative record that can no longer be read back as it was (the file changed underneath). */
export function recordMovedError(location: RecordLocation, reason: string): ReaderError {
  return new ReaderError(
    'record_moved',
    `${location.file} line ${location.line} (byte ${location.offset}): ${reason}`,
    {
      file: location.file,
      line: location.line,
      offset: location.offset,
    },
  );
}
