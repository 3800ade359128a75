import { validateRecord } from '@turnjournal/schema';
import { WriterError } from '../errors.js';
import { encodeParsedLine, encodeRecordLine, lineOfJson, type RecordLine } from './encode-record.js';
import { jsonCopy, NOT_CLEAN } from './json-copy.js';

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
  return checkEncoded(named(rule, file, () => encodeParsedLine(record, maxLineBytes)).bytes, record, rule, file);
}

/**
 * The one "validate what will be written" encoder of the writers: encodes `record` as one JSONL line (see
 * {@link encodeRecordLine}: `invalid_record`, `line_too_long`) and checks against `rule` the value a reader will parse
 * from that line — so that what `JSON.stringify` changes (an `undefined` member dropped, `NaN` turned into `null`, a
 * `toJSON` method) can never slip a record past the check (TJ-COMPAT-018). A refusal is a {@link WriterError} naming
 * `file`.
 *
 * That value is had one of two ways. A record of strings, finite numbers, booleans, nulls, plain objects and arrays
 * (what writers build from their callers' ids, text and parsed content) is copied by {@link jsonCopy}, which vouches
 * that the copy is what `JSON.parse` of its own `JSON.stringify` gives, and the line is serialised from the copy: no
 * parse of the line back, which cost as much as the serialisation, and no scan of the text for unsafe integers (the
 * copy checks each number), which made the two records of a live committed message markedly cheaper to encode
 * (bench/results/history.md, "The live committed message: what the figure measured, and the checked encoder").
 * Anything else — a value `JSON.stringify` changes or refuses — is serialised as given and the line parsed back, as
 * before, so what is checked is what was written either way.
 */
export function encodeCheckedRecord(
  record: unknown,
  rule: RecordRule,
  maxLineBytes: number,
  file: string,
): EncodedRecord {
  const copy = typeof record === 'object' && record !== null && !Array.isArray(record) ? jsonCopy(record) : NOT_CLEAN;
  if (copy !== NOT_CLEAN) {
    const written = copy as Record<string, unknown>;
    const line = named(rule, file, () => lineOfJson(JSON.stringify(written), maxLineBytes));
    return checkEncoded(line.bytes, written, rule, file);
  }
  const line = encodeLine(record, rule, maxLineBytes, file);
  return checkEncoded(line.bytes, JSON.parse(line.text) as Record<string, unknown>, rule, file);
}

/** {@link encodeRecordLine}, its refusals naming `file` and the record's type. */
function encodeLine(record: unknown, rule: RecordRule, maxLineBytes: number, file: string): RecordLine {
  return named(rule, file, () => encodeRecordLine(record, maxLineBytes));
}

/** Runs `encode`; a refusal that names no file is thrown again naming `file` and the record's type. */
function named(rule: RecordRule, file: string, encode: () => RecordLine): RecordLine {
  try {
    return encode();
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
