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

/**
 * The members a record method's options add to its record: `meta` (TJ-RUN-012), and `ts` when the caller gives the
 * time the host observed what the record describes (TJ-RUN-020), written in UTC; a time that is not a valid `Date` is
 * refused (`invalid_option`) before anything is written.
 */
export function recordOptions(
  options: { readonly meta?: unknown; readonly ts?: Date },
  path: string,
): Record<string, unknown> {
  const { ts } = options;
  if (ts === undefined) return optional('meta', options.meta);
  if (!(ts instanceof Date) || !Number.isFinite(ts.getTime()))
    throw new WriterError('invalid_option', 'options.ts must be a valid Date (TJ-RUN-020)', path);
  return { ...optional('meta', options.meta), ts: ts.toISOString() };
}
