import type { Finding } from '@turnjournal/schema';

/**
 * Why a reader call failed, as a stable code:
 * - a finding code (`malformed_line`, `invalid_record`, `zero_filled`, …): a `strict`-mode read stopped at the first
 *   damage or invalid record (spec TJ-FRAME-022, TJ-FRAME-023); {@link ReaderError.finding} holds the finding;
 * - `invalid_option`: an option of the call is out of range (a non-positive line limit, a negative offset, …);
 * - `record_moved`: a record can no longer be read back where it was found (the file changed underneath);
 * - `file_shrank`: a file became shorter while it was being read.
 */
export type ReaderErrorCode = 'invalid_option' | 'record_moved' | 'file_shrank' | (string & {});

/** The one error class of `@turnjournal/reader`: every failure it throws on purpose carries a stable `code`. */
export class ReaderError extends Error {
  /** What went wrong, as a stable code (see {@link ReaderErrorCode}). */
  readonly code: ReaderErrorCode;
  /** The file concerned, when there is one. */
  readonly file: string | undefined;
  /** 1-based line number of the offending line, when there is one. */
  readonly line: number | undefined;
  /** 0-based byte offset of the offending line, when there is one. */
  readonly offset: number | undefined;
  /** The finding that stopped a `strict` read; undefined for the other codes. */
  readonly finding: Finding | undefined;

  constructor(
    code: ReaderErrorCode,
    message: string,
    where: { file?: string; line?: number; offset?: number; finding?: Finding } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ReaderError';
    this.code = code;
    this.file = where.file;
    this.line = where.line;
    this.offset = where.offset;
    this.finding = where.finding;
  }

  /** The error for a finding that stops a read: a `strict` read's first damage or invalid record, a special file. */
  static fromFinding(finding: Finding): ReaderError {
    return new ReaderError(
      finding.code,
      `${finding.code} in ${finding.file ?? '(input)'} at line ${finding.line ?? '?'} (byte ${finding.offset ?? '?'}): ${finding.message}`,
      { file: finding.file, line: finding.line, offset: finding.offset, finding },
    );
  }
}
