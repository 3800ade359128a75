import { type Finding, makeFinding, type SessionState, validateRecord } from '@turnjournal/schema';
import { ReaderError } from '../errors.js';
import { openRegular } from '../file/open-regular.js';
import { isInvalidUtf8 } from '../framing/parse-line-text.js';
import { type RecoveryMode, recordFinding } from '../framing/read-journal.js';

/** Default limit on the size of a state document: 64 MiB (TJ-STATE-003). */
export const DEFAULT_MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

/** Options of {@link readStateDocument}. */
export interface ReadStateOptions {
  /**
   * Recovery mode; `tolerant` by default. A single document has nothing to skip to, so `tolerant` and `prefix` behave
   * alike; `strict` throws at a malformed document or an invalid record (TJ-STATE-004, TJ-FRAME-022).
   */
  readonly mode?: RecoveryMode;
  /** Document size limit in bytes, BOM included; 64 MiB by default (TJ-STATE-003). */
  readonly maxDocumentBytes?: number;
}

/**
 * A state document as read. `status` says what came of it: `valid` (with the state), or why there is no state:
 * `malformed_document` (not UTF-8, not JSON, not an object, too large), `invalid_record` (not a valid v1
 * `SessionState`) or `unsupported_version`. `findings` holds the matching finding.
 */
export type ReadStateResult =
  | {
      readonly status: 'valid';
      /** The file read. */
      readonly file: string;
      /** The snapshot; unknown members are kept (TJ-COMPAT-003). */
      readonly state: SessionState;
      /** Empty: a valid document has nothing to report. */
      readonly findings: readonly Finding[];
    }
  | {
      readonly status: 'malformed_document' | 'invalid_record' | 'unsupported_version';
      /** The file read. */
      readonly file: string;
      /** The one finding explaining why there is no state. */
      readonly findings: readonly Finding[];
    };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const CHUNK_BYTES = 1024 * 1024;

/**
 * Reads a session state document (spec §8): one JSON value, a leading UTF-8 BOM and any JSON whitespace (LF included)
 * allowed (TJ-STATE-002). A document over the size limit is rejected before it is read whole, so a huge file costs no
 * memory. Content problems never throw outside `strict` mode (TJ-STATE-004): they are `malformed_document`
 * (TJ-STATE-003), or the schema layer's `invalid_record` / `unsupported_version` (TJ-STATE-001, TJ-COMPAT-011). A
 * document with no `schema_version`, or one that §4.1 places in another family, is `invalid_record` (spec §9.4 table).
 *
 * Throws the file system error when the file cannot be opened or read, ENOENT included: whether a missing snapshot is
 * normal (a new session) is for the caller to decide, and an error keeps "no file" distinct from "bad file".
 */
export async function readStateDocument(path: string, options: ReadStateOptions = {}): Promise<ReadStateResult> {
  return parseStateDocument(
    await readLimited(path, options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES),
    path,
    options,
  );
}

/**
 * {@link readStateDocument} of a document already read (a record store's document), named `path` in findings:
 * `'oversized'` when it was larger than the limit. Internal to the reader.
 */
export function parseStateDocument(
  bytes: Uint8Array | 'oversized',
  path: string,
  options: ReadStateOptions = {},
): ReadStateResult {
  const mode = options.mode ?? 'tolerant';
  const limit = options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  const where = { file: path };
  if (bytes === 'oversized') {
    return malformed(path, mode, `the document is larger than the ${limit}-byte document limit`);
  }
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let text: string;
  try {
    text = utf8.decode(bytes.subarray(start));
  } catch (error) {
    if (!isInvalidUtf8(error)) throw error;
    return malformed(path, mode, 'the document is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return malformed(path, mode, 'the document is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const what = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return malformed(path, mode, `the document is ${what}, not a JSON object`);
  }
  const validation = validateRecord(value);
  if (validation.status === 'valid' && validation.classification.family === 'state') {
    return { status: 'valid', file: path, state: value as SessionState, findings: [] };
  }
  if (validation.status === 'unsupported_version' && validation.classification.family === 'state') {
    const finding = recordFinding(validation, where) ?? makeFinding('unsupported_version', 'unsupported', where);
    return { status: 'unsupported_version', file: path, findings: [finding] };
  }
  const finding =
    validation.status === 'invalid'
      ? (recordFinding(validation, where) ?? makeFinding('invalid_record', 'invalid state document', where))
      : makeFinding('invalid_record', notStateMessage(validation.classification), where);
  if (mode === 'strict') throw ReaderError.fromFinding(finding);
  return { status: 'invalid_record', file: path, findings: [finding] };
}

function notStateMessage(classification: { family: string; type?: string | undefined }): string {
  if (classification.family === 'unknown' && classification.type === undefined) {
    return '(record): required property schema_version is missing; the document is not a session state';
  }
  const type = classification.type === undefined ? '' : ` "${classification.type}"`;
  return `(record): the document is a ${classification.family} record${type}, not a session state`;
}

function malformed(file: string, mode: RecoveryMode, message: string): ReadStateResult {
  const finding = makeFinding('malformed_document', message, { file });
  if (mode === 'strict') throw ReaderError.fromFinding(finding);
  return { status: 'malformed_document', file, findings: [finding] };
}

/** Reads the whole file, or stops at `limit + 1` bytes: the size on disk may change between stat and read. */
async function readLimited(path: string, limit: number): Promise<Uint8Array | 'oversized'> {
  // Never a FIFO, socket or device: those throw a `special_file` finding instead of blocking (TJ-FAM-024).
  const handle = await openRegular(path);
  try {
    const { size } = await handle.stat();
    if (size > limit) return 'oversized';
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, limit + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit) return 'oversized';
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}
