import { validateRecord } from '@turnjournal/schema';
import { WriterError } from '../errors.js';
import { encodeRecordLine, type RecordLine } from './encode-record.js';

/** What a writer may write: a record of this family and type, a v1-valid one or (`v1Only: false`) any accepted one. */
export interface RecordRule {
  /** The family the record must classify as (spec §4.1). */
  readonly family: 'turn' | 'event' | 'run' | 'state';
  /** The type it must classify as. */
  readonly type: string;
  /**
   * True (the default): the record must be a valid v1 record of `type`. False: a type v1 does not define is allowed
   * too (an extension or a later version's type), as long as its family envelope is valid; a v1 type is still checked
   * against its schema.
   */
  readonly v1Only?: boolean;
}

/** A record encoded as its line, and the value a reader will parse from that line. */
export interface EncodedRecord {
  /** The line, LF included. */
  readonly bytes: Uint8Array;
  /** `JSON.parse` of the line: what was checked, and what the writer's state must follow. */
  readonly written: Record<string, unknown>;
  /** True for a valid v1 record; false for an accepted record of a type v1 does not define (`v1Only: false`). */
  readonly valid: boolean;
}

/**
 * {@link encodeCheckedRecord} for a record built only of values parsed from JSON lines (and frozen there), such as an
 * event log's checkpoint of the message list it folded: such a value is its own JSON round trip, so the record itself
 * is validated and kept as `written`, without parsing the line back. For a checkpoint that parse cost as much as the
 * serialisation and replaced every message object of the writer's state at every checkpoint.
 */
export function encodeParsedRecord(
  record: Record<string, unknown>,
  rule: RecordRule,
  maxLineBytes: number,
  file: string,
): EncodedRecord {
  return checkEncoded(encodeLine(record, rule, maxLineBytes, file).bytes, record, rule, file);
}

/**
 * The one "validate what will be written" encoder of the writers: encodes `record` as one JSONL line (see
 * {@link encodeRecordLine}: `invalid_record`, `line_too_long`), parses the line back and checks the parsed value against
 * `rule` — so that what `JSON.stringify` changes (an `undefined` member dropped, `NaN` turned into `null`, a `toJSON`
 * method) can never slip a record past the check (TJ-COMPAT-018). A refusal is a {@link WriterError} naming `file`.
 */
export function encodeCheckedRecord(
  record: unknown,
  rule: RecordRule,
  maxLineBytes: number,
  file: string,
): EncodedRecord {
  const line = encodeLine(record, rule, maxLineBytes, file);
  return checkEncoded(line.bytes, JSON.parse(line.text) as Record<string, unknown>, rule, file);
}

/** {@link encodeRecordLine}, its refusals naming `file` and the record's type. */
function encodeLine(record: unknown, rule: RecordRule, maxLineBytes: number, file: string): RecordLine {
  try {
    return encodeRecordLine(record, maxLineBytes);
  } catch (error) {
    if (error instanceof WriterError && error.file === undefined)
      throw new WriterError(error.code, `${file}: the ${rule.type} record: ${error.message}`, file, { cause: error });
    throw error;
  }
}

/** Checks the value a line holds against `rule`: the encoded record, or an `invalid_record` refusal. */
function checkEncoded(
  bytes: Uint8Array,
  written: Record<string, unknown>,
  rule: RecordRule,
  file: string,
): EncodedRecord {
  const validation = validateRecord(written);
  const { classification, status } = validation;
  const family = classification.family;
  const actual = family === 'none' || family === 'unknown' ? undefined : classification.type;
  const accepted = status === 'valid' || (rule.v1Only === false && (status === 'unknown' || status === 'extension'));
  if (accepted && family === rule.family && actual === rule.type) return { bytes, written, valid: status === 'valid' };
  const detail =
    status === 'invalid'
      ? validation.errors.map((error) => error.message).join('; ')
      : family !== rule.family
        ? `it is ${family === 'none' ? 'not a record' : `a ${family}-family record`}, not a ${rule.family} record`
        : `it validates as ${status} ${actual ?? ''}`;
  throw new WriterError('invalid_record', `refusing to write an invalid "${rule.type}" record: ${detail}`, file);
}
