import { WriterError } from '../errors.js';

/** Default line-size limit of the writer, in bytes without the LF: the reader's default limit (spec §3.7). */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

const LINE_SEPARATORS = /[\u2028\u2029]/g;
const LF = 0x0a;
/**
 * Cheap pre-check: an integer beyond ±(2^53-1) prints with at least 16 digits, or with an exponent `e+`. Two scans,
 * not the one expression `/\d{16}|e\+/`: `includes` is a plain substring search, and the digits are looked for only
 * where `JSON.stringify` (no indentation) can start a number — after `:`, `,` or `[`, and a sign — so the scan skips
 * to those characters instead of trying every position. Every unsafe integer still matches (digits inside strings no
 * longer do, which only spared a needless full check). The single expression cost a quarter of a short record's
 * encoding; these two, a tenth.
 */
const SIXTEEN_DIGITS = /[:,[]-?\d{16}/;

/** True when `json` could print an integer beyond ±(2^53-1): the text {@link rejectUnsafeIntegers} must then check. */
function mayHoldUnsafeInteger(json: string): boolean {
  return json.includes('e+') || SIXTEEN_DIGITS.test(json);
}

/**
 * `JSON.stringify` of a record object, or a {@link WriterError} (`invalid_record`) when it cannot be serialised (a
 * cycle, a BigInt) or does not serialise to a JSON object (a `toJSON` returning something else).
 */
export function serialiseRecord(record: object): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(record);
  } catch (error) {
    throw new WriterError(
      'invalid_record',
      `the record cannot be serialised as JSON: ${error instanceof Error ? error.message : String(error)}`,
      undefined,
      { cause: error },
    );
  }
  if (json === undefined || json[0] !== '{')
    throw new WriterError('invalid_record', 'the record does not serialise to a JSON object (does it define toJSON?)');
  return json;
}

/** A record encoded as one line. */
export interface RecordLine {
  /** The line's text without its LF: what a reader parses. */
  readonly text: string;
  /** The line's UTF-8 bytes, LF included. */
  readonly bytes: Uint8Array;
}

/**
 * Encodes a record as one JSONL line: `JSON.stringify` of the object, U+2028 and U+2029 escaped (so that no reader
 * that splits on Unicode line terminators can cut the record, TJ-FRAME-007), no BOM (TJ-FRAME-008), and one final LF
 * (TJ-FRAME-005). Rejects with a {@link WriterError} a value that is not a plain JSON object (`invalid_record`) and a
 * line longer than `maxLineBytes` (`line_too_long`): a writer never produces a line that a reader with the same limit
 * would skip.
 */
export function encodeRecord(record: unknown, maxLineBytes: number = DEFAULT_MAX_LINE_BYTES): Uint8Array {
  return encodeRecordLine(record, maxLineBytes).bytes;
}

/** {@link encodeRecord}, also giving the line's text, so a caller that parses it back need not decode the bytes. */
export function encodeRecordLine(record: unknown, maxLineBytes: number = DEFAULT_MAX_LINE_BYTES): RecordLine {
  return lineOfJson(recordJson(record), maxLineBytes);
}

/**
 * {@link encodeRecordLine} without the bytes: the line's text (no LF) and its UTF-8 length with the LF, for a caller
 * that writes the text straight into a larger buffer (`AppendFile.appendRecord`, which copies the lines of a batch
 * into its one write), so that no buffer is allocated and filled per record only to be copied again. Same checks,
 * same refusals, same bytes in the end.
 */
export function encodeRecordText(record: unknown, maxLineBytes: number): RecordText {
  const text = escapeLineSeparators(recordJson(record));
  return { text, length: checkedLength(text, maxLineBytes) + 1 };
}

/** A record's line as text: what {@link encodeRecordText} gives. */
export interface RecordText {
  /** The line without its LF. */
  readonly text: string;
  /** The line's length in UTF-8 bytes, LF included. */
  readonly length: number;
}

/** The checked `JSON.stringify` of a record: a JSON object holding no integer beyond ±(2^53-1). */
function recordJson(record: unknown): string {
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    throw new WriterError('invalid_record', 'a journal record must be a JSON object');
  const json = serialiseRecord(record);
  if (mayHoldUnsafeInteger(json)) rejectUnsafeIntegers(record);
  return json;
}

/**
 * {@link encodeRecordLine} for a record built only of values parsed from JSON lines (no cycle, no `toJSON`, nothing
 * `JSON.stringify` drops or refuses but an integer beyond ±(2^53-1) that a foreign writer's line held): the check for
 * such integers walks the record's numbers instead of scanning its text with the regular expression, which for an
 * event log's checkpoint of its whole message list cost about as much as the serialisation itself, and several times
 * the walk (bench/results/history.md, "The live committed message: what the figure measured, and the checked
 * encoder").
 */
export function encodeParsedLine(record: object, maxLineBytes: number): RecordLine {
  const json = serialiseRecord(record);
  const unsafe = unsafeIntegerIn(record, 0);
  if (unsafe === true || (unsafe === undefined && mayHoldUnsafeInteger(json))) rejectUnsafeIntegers(record);
  return lineOfJson(json, maxLineBytes);
}

/** Nesting the walk of {@link unsafeIntegerIn} goes to; deeper, it answers undefined and the text is scanned. */
const MAX_WALK_DEPTH = 64;

/** True when `value` holds an integer beyond ±(2^53-1), false when not, undefined when too deep to walk. */
function unsafeIntegerIn(value: unknown, depth: number): boolean | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (typeof value !== 'object' || value === null) return false;
  if (depth >= MAX_WALK_DEPTH) return undefined;
  for (const member of Array.isArray(value) ? value : Object.values(value)) {
    const found = unsafeIntegerIn(member, depth + 1);
    if (found !== false) return found;
  }
  return false;
}

/**
 * The line of a record's `JSON.stringify` text: U+2028 and U+2029 escaped (TJ-FRAME-007), the length checked against
 * `maxLineBytes` (`line_too_long`), one final LF. For a caller that serialised a value it vouches for itself (no unsafe
 * integer, a JSON object); {@link encodeRecordLine} checks those first.
 */
export function lineOfJson(json: string, maxLineBytes: number): RecordLine {
  const text = escapeLineSeparators(json);
  // A Buffer, not TextEncoder: several times faster for the short lines most records are (a pooled copy). Written in
  // place rather than from `text + LF`, which V8 would first flatten into a copy: several times slower for a long
  // checkpoint (bench/results/history.md, "Figures that were in code comments").
  const length = checkedLength(text, maxLineBytes);
  const bytes = Buffer.allocUnsafe(length + 1);
  bytes.write(text, 0, length, 'utf8');
  bytes[length] = LF;
  return { text, bytes };
}

/** The UTF-8 length of a line's text (no LF), or `line_too_long` when it is over `maxLineBytes`. */
function checkedLength(text: string, maxLineBytes: number): number {
  const length = Buffer.byteLength(text, 'utf8');
  if (length > maxLineBytes)
    throw new WriterError(
      'line_too_long',
      `the record is ${length} bytes long, over the line-size limit of ${maxLineBytes} bytes`,
    );
  return length;
}

/**
 * Throws `invalid_record` when the record holds an integer outside -(2^53-1)..2^53-1 (TJ-FRAME-035): readers in other
 * languages would parse a different value from the digits `JSON.stringify` prints. Only called when the JSON text
 * could hold one, so the common record pays for a regular-expression scan only.
 */
function rejectUnsafeIntegers(record: object): void {
  JSON.stringify(record, (key, value: unknown) => {
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value))
      throw new WriterError(
        'invalid_record',
        `member "${key}" holds ${value}, an integer outside ±(2^53-1) that readers cannot represent exactly (TJ-FRAME-035)`,
      );
    return value;
  });
}

/**
 * `text` with U+2028 and U+2029 escaped as `encodeRecord` escapes them (TJ-FRAME-007). Whether there is one is asked
 * with two `indexOf`, not a regular expression: a string search for one character, which V8 answers at once for a
 * one-byte string (it cannot hold either) and with a vectorised scan otherwise, against a regular expression run over
 * every character, which cost far more for the line of a short record; and every record written pays for this check
 * (bench/results/history.md, "Against Redis and PostgreSQL, the runs of 2026-11-29 morning").
 */
export function escapeLineSeparators(text: string): string {
  return text.indexOf('\u2028') < 0 && text.indexOf('\u2029') < 0
    ? text
    : text.replace(LINE_SEPARATORS, escapeSeparator);
}

function escapeSeparator(character: string): string {
  return character === '\u2028' ? '\\u2028' : '\\u2029';
}

/**
 * An upper bound of the UTF-8 bytes `value` takes in a JSON line (every string character counted as escaped,
 * `\uXXXX`, six bytes), or -1 when it is not a plain tree of strings, numbers, booleans, nulls, arrays and objects
 * within 16 levels (then only encoding it tells). Lets a writer tell, without encoding, that a record cannot reach the
 * line limit.
 */
export function jsonBytesBound(value: unknown, depth = 0): number {
  if (typeof value === 'string') return 6 * value.length + 2;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return 32;
  if (typeof value !== 'object' || depth >= 16) return -1;
  const prototype = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null) return -1;
  let total = 2;
  for (const key in value) {
    const member = jsonBytesBound((value as Record<string, unknown>)[key], depth + 1);
    if (member < 0) return -1;
    total += 6 * key.length + 4 + member;
  }
  return total;
}
