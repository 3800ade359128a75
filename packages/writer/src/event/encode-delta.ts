import type { EncodedRecord } from '../append/encode-checked.js';
import { escapeLineSeparators } from '../append/encode-record.js';

const DELTA_MEMBERS = ['request_id', 'message_id', 'text'] as const;

/**
 * True when `JSON.stringify(text)` is `text` in quotes and all of it is ASCII: no character below U+0020, no quote or
 * backslash (the characters JSON escapes, lone surrogates being beyond ASCII), nothing above U+007F (so one UTF-8 byte
 * each, and no U+2028/U+2029). What most tokens of a streamed answer are; for them the quoting and the UTF-8 length
 * need no call into the engine.
 */
function isPlainAscii(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7f || code === 0x22 || code === 0x5c) return false;
  }
  return true;
}

/**
 * Builds the line of a `chat.delta` record from its strings, for one event log, and counts its UTF-8 bytes. The text
 * between `ts` and the delta's text (the two ids, serialised and escaped) is kept for the last ids seen, because a
 * segment's deltas all carry the same two, and serialising and scanning them once per delta was a sixth of the
 * encoder's time. One per event log, not one per process: the cache is state of the log's stream, and a module-level
 * one would be shared (and thrashed) by every log a server streams to at once.
 *
 * The line is the checked encoder's line byte for byte: the same member order, `JSON.stringify` of each string (which
 * escapes lone surrogates), U+2028/U+2029 escaped. Escaping them replaces single characters, so escaping the pieces
 * is escaping the line; `seq` and `ts` (digits, an RFC 3339 stamp the writer made: ASCII) never hold one.
 */
export class DeltaLines {
  #requestId = '';
  #messageId = '';
  #middle = '';
  #middleBytes = 0;
  /** The text from after `seq` to the text's opening quote for the last `ts` and ids: fewer pieces to join per line. */
  #ts = '';
  #head = '';
  #headBytes = 0;
  #bytes = 0;

  /** The UTF-8 length of the last line {@link DeltaLines.line} built, LF included. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The line (LF included) of `{seq, ts, type: "chat.delta", payload: {request_id, message_id, text}}`, `ts` an
   * ASCII stamp; its UTF-8 length is then {@link DeltaLines.bytes}.
   */
  line(seq: number, ts: string, requestId: string, messageId: string, text: string): string {
    const middle = this.#middleOf(requestId, messageId);
    if (isPlainAscii(text)) {
      if (ts !== this.#ts || this.#head === '') {
        this.#ts = ts;
        this.#head = `,"ts":"${ts}"${middle}"`;
        this.#headBytes = this.#head.length - middle.length + this.#middleBytes;
      }
      const line = `{"seq":${seq}${this.#head}${text}"}}\n`;
      this.#bytes = line.length - this.#head.length + this.#headBytes;
      return line;
    }
    const quoted = escapeLineSeparators(JSON.stringify(text));
    const line = `{"seq":${seq},"ts":"${ts}"${middle}${quoted}}}\n`;
    this.#bytes = line.length - middle.length - quoted.length + this.#middleBytes + Buffer.byteLength(quoted, 'utf8');
    return line;
  }

  #middleOf(requestId: string, messageId: string): string {
    if (requestId !== this.#requestId || messageId !== this.#messageId || this.#middle === '') {
      this.#middle = escapeLineSeparators(
        `,"type":"chat.delta","payload":{"request_id":${JSON.stringify(requestId)},"message_id":${JSON.stringify(messageId)},"text":`,
      );
      this.#middleBytes = Buffer.byteLength(this.#middle, 'utf8');
      this.#head = '';
      this.#requestId = requestId;
      this.#messageId = messageId;
    }
    return this.#middle;
  }
}

/**
 * The event-log writer's fast path for its most frequent record: a `chat.delta` whose payload is a plain object of
 * exactly `request_id`, `message_id` and `text`, in that order, all strings, the ids not empty — the shape the schema
 * asks for with nothing more. A live session streams thousands of them per answer, and the generic checked encoder
 * (`encodeCheckedRecord`) serialises the record, scans it for unsafe integers, parses the line back and validates
 * the result; for this shape each of those steps has a known outcome, so the line is put together from the three
 * strings instead ({@link DeltaLines}), and the value a reader parses back is the same three strings.
 *
 * Returns undefined for anything else — another shape, extra members, a non-string, an empty id, a line over
 * `maxLineBytes` — and the caller takes the generic path, which refuses what the schema refuses with its error.
 */
export function encodeDeltaRecord(
  seq: number,
  ts: string,
  payload: Readonly<Record<string, unknown>>,
  maxLineBytes: number,
  lines: DeltaLines,
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
  const bytes: Uint8Array = Buffer.from(lines.line(seq, ts, requestId, messageId, text), 'utf8');
  if (bytes.length - 1 > maxLineBytes) return undefined;
  return {
    bytes,
    written: { seq, ts, type: 'chat.delta', payload: { request_id: requestId, message_id: messageId, text } },
    // The shape the schema asks for, so a valid v1 record (see above).
    valid: true,
  };
}
