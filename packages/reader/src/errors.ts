import type { Finding } from '@turnjournal/schema';

/** Raised by a `strict`-mode read at the first damage or invalid record (spec TJ-FRAME-022, TJ-FRAME-023). */
export class JournalReadError extends Error {
  /** The finding code that stopped the read (`malformed_line`, `invalid_record`, …). */
  readonly code: string;
  /** The file being read. */
  readonly file: string | undefined;
  /** 1-based line number of the offending line. */
  readonly line: number | undefined;
  /** 0-based byte offset of the offending line. */
  readonly offset: number | undefined;
  /** The full finding. */
  readonly finding: Finding;

  constructor(finding: Finding, options?: ErrorOptions) {
    super(
      `${finding.code} in ${finding.file ?? '(input)'} at line ${finding.line ?? '?'} (byte ${finding.offset ?? '?'}): ${finding.message}`,
      options,
    );
    this.name = 'JournalReadError';
    this.code = finding.code;
    this.file = finding.file;
    this.line = finding.line;
    this.offset = finding.offset;
    this.finding = finding;
  }
}
