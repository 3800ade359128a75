import type { EncodedRecord } from '../append/encode-checked.js';
import { escapeLineSeparators } from '../append/encode-record.js';

const DELTA_MEMBERS = ['request_id', 'message_id', 'text'] as const;

/**
 * The line's text between `ts` and the delta's text, escaped, for the last ids seen: a segment's deltas all carry the
 * same two ids, which were serialised and scanned once per delta before (a sixth of this function's time).
 */
let lastRequestId = '';
let lastMessageId = '';
let lastMiddle = '';

function middleOf(requestId: string, messageId: string): string {
  if (requestId !== lastRequestId || messageId !== lastMessageId || lastMiddle === '') {
    lastMiddle = escapeLineSeparators(
      `,"type":"chat.delta","payload":{"request_id":${JSON.stringify(requestId)},"message_id":${JSON.stringify(messageId)},"text":`,
    );
    lastRequestId = requestId;
    lastMessageId = messageId;
  }
  return lastMiddle;
}

/**
 * The event-log writer's fast path for its most frequent record: a `chat.delta` whose payload is a plain object of
 * exactly `request_id`, `message_id` and `text`, in that order, all strings, the ids not empty — the shape the schema
 * asks for with nothing more. A live session streams thousands of them per answer, and the generic checked encoder
 * (`encodeCheckedRecord`) serialises the record, scans it for unsafe integers, parses the line back and validates
 * the result; for this shape each of those steps has a known outcome, so the line is put together from the three
 * strings instead. It is the same line, byte for byte: the same member order, `JSON.stringify` of each string (which
 * escapes lone surrogates), U+2028/U+2029 escaped, and the value a reader parses back is the same three strings.
 *
 * Returns undefined for anything else — another shape, extra members, a non-string, an empty id, a line over
 * `maxLineBytes` — and the caller takes the generic path, which refuses what the schema refuses with its error.
 */
export function encodeDeltaRecord(
  seq: number,
  ts: string,
  payload: Readonly<Record<string, unknown>>,
  maxLineBytes: number,
): EncodedRecord | undefined {
  const prototype = Object.getPrototypeOf(payload) as unknown;
  // A class instance may serialise otherwise (a `toJSON` method); only plain objects are taken.
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  let members = 0;
  for (const key in payload) {
    if (key !== DELTA_MEMBERS[members]) return undefined;
    members += 1;
  }
  if (members !== 3) return undefined;
  const { request_id: requestId, message_id: messageId, text } = payload;
  if (typeof requestId !== 'string' || requestId === '' || typeof messageId !== 'string' || messageId === '')
    return undefined;
  if (typeof text !== 'string') return undefined;
  // Escaping U+2028/U+2029 replaces single characters, so escaping the pieces is escaping the line; `seq` and `ts`
  // (digits, an RFC 3339 stamp the writer made) never hold one.
  const json = `{"seq":${seq},"ts":"${ts}"${middleOf(requestId, messageId)}${escapeLineSeparators(JSON.stringify(text))}}}\n`;
  const bytes: Uint8Array = Buffer.from(json, 'utf8');
  if (bytes.length - 1 > maxLineBytes) return undefined;
  return {
    bytes,
    written: { seq, ts, type: 'chat.delta', payload: { request_id: requestId, message_id: messageId, text } },
    // The shape the schema asks for, so a valid v1 record (see above).
    valid: true,
  };
}
