import { validateRecord } from '@turnjournal/schema';
import { encodeRecord } from '../append/encode-record.js';
import { requireValidRecord } from '../append/require-valid.js';
import { WriterError } from '../errors.js';

const decoder = new TextDecoder();

/**
 * Encodes a run record as one JSONL line and validates what will actually be written: the line is parsed back and the
 * parsed object is checked, so that what `JSON.stringify` changes (an `undefined` member dropped, `NaN` turned into
 * `null`, a `toJSON` method) can never slip an invalid record past the check (TJ-COMPAT-018).
 *
 * With `expected` set, the record must be a valid v1 record of that type (`requireValidRecord`). Without it the
 * record is of a type v1 does not define: it must still classify as a run record (`run_id` present, TJ-COMPAT-008) and
 * satisfy the run envelope (`type`, `run_id`, `ts`).
 */
export function encodeRunRecord(
  record: Record<string, unknown>,
  expected: string | undefined,
  maxLineBytes: number,
  file: string,
): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = encodeRecord(record, maxLineBytes);
  } catch (error) {
    if (error instanceof WriterError && error.file === undefined)
      throw new WriterError(error.code, `${file}: ${error.message}`, file, { cause: error });
    throw error;
  }
  const written = JSON.parse(decoder.decode(bytes)) as Record<string, unknown>;
  if (expected !== undefined) {
    requireValidRecord(written, expected, file);
    return bytes;
  }
  const validation = validateRecord(written);
  const classification = validation.classification;
  if (classification.family !== 'run')
    throw new WriterError(
      'invalid_record',
      `refusing to write "${String(record.type)}" into a run file: it is ${
        classification.family === 'none' ? 'not a record' : `a ${classification.family}-family type`
      }`,
      file,
    );
  if (validation.status === 'invalid')
    throw new WriterError(
      'invalid_record',
      `refusing to write an invalid "${String(record.type)}" record: ${validation.errors.map((e) => e.message).join('; ')}`,
      file,
    );
  return bytes;
}
