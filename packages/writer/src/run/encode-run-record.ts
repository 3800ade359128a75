import { encodeCheckedRecord } from '../append/encode-checked.js';
import { WriterError } from '../errors.js';

/**
 * Encodes a run record with the writers' one checked encoder (TJ-COMPAT-018): with `known` the record must be a valid
 * v1 record of its type; otherwise (`RunWriter.append` of a type v1 does not define) it must classify as a run record
 * (`run_id` present, TJ-COMPAT-008) with a valid run envelope.
 */
export function encodeRunRecord(
  record: Record<string, unknown>,
  type: string,
  known: boolean,
  maxLineBytes: number,
  file: string,
): Uint8Array {
  return encodeCheckedRecord(record, { family: 'run', type, v1Only: known }, maxLineBytes, file).bytes;
}

/** `{[key]: value}`, or nothing when the value is undefined (JSON drops it anyway; the record stays explicit). */
export function optional(key: string, value: unknown): Record<string, unknown> {
  return value === undefined ? {} : { [key]: value };
}

/** Throws `invalid_record` unless `seq` is an integer >= 0. */
export function requireSeq(seq: unknown, what: string, file: string): asserts seq is number {
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
    throw new WriterError('invalid_record', `${what} must be an integer >= 0, got ${String(seq)}`, file);
}
