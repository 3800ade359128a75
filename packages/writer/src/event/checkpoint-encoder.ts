import { type EncodedRecord, encodeParsedRecord, type RecordRule } from '../append/encode-checked.js';
import { WriterError } from '../errors.js';

const CHECKPOINT_RULE: RecordRule = { family: 'event', type: 'checkpoint' };
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const LF = 0x0a;
const EMPTY = Buffer.alloc(0);
/** What a `message_append` line holds between its `ts` and its message. */
const MIDDLE = Buffer.from('","type":"message_append","payload":{"message":', 'latin1');

/** A checkpoint record as the event log builds it: its payload holds the message list, then the run index. */
export interface CheckpointRecord {
  readonly seq: number;
  readonly ts: string;
  readonly type: 'checkpoint';
  readonly payload: { readonly messages: readonly object[]; readonly runs: readonly object[] };
  /** The log's epoch (spec §6.7, TJ-EVENT-024): an envelope member after the payload, so the head is unchanged. */
  readonly epoch?: string;
}

/**
 * Encodes an event log's checkpoints (TJ-EVENT-006, TJ-EVENT-007) from text the writer already has. A checkpoint
 * repeats the whole message list, and serialising it afresh each time was a large share of a live session's CPU in a
 * conversation of a thousand tool results, and held the event loop for a long pause on a list near the line-size limit
 * (bench/results/history.md, "Long conversations, 2026-11-27 night"). But a conversation mostly grows by appended
 * messages, and the text of each one is already encoded: the older ones in the last checkpoint's line, the newer ones
 * in their `message_append` lines, which the writer hands over as it writes them
 * ({@link CheckpointEncoder.noteAppended}). When the list is exactly those messages — the very objects, in order (the
 * writer's fold keeps its messages frozen; an edit, an undo or a re-read of the file replaces them) — the new line is
 * those texts copied, with only the run index serialised and checked.
 *
 * It is the line a full encoding gives, byte for byte: `JSON.stringify` of an array is its members' texts joined by
 * commas, and the separator escape (TJ-FRAME-007) and UTF-8 work character by character. It is as checked: a message
 * list validates and passes the integer check (TJ-FRAME-035) message by message, and each message passed both in the
 * record it came in, as a checkpoint's or as a `message_append`'s own `message`. Anything else takes the full encoding.
 *
 * Memory: the last checkpoint's text of its messages (a view into its line, off the heap) and a copy of the text of
 * the messages appended since, up to the line-size limit; past it, only that the checkpoint cannot fit.
 */
export class CheckpointEncoder {
  /** The messages whose text is known, in list order: the last checkpoint's, then those appended since. */
  #messages: object[] = [];
  /** The text of the last checkpoint's messages, the first of them, as its line holds it (a view into the line). */
  #lineText: Uint8Array = new Uint8Array(0);
  /**
   * The texts of the others, copied from their `message_append` lines, each after a comma when a message comes
   * before it: one buffer of its own (not the pool's, whose slabs a small copy would keep alive), grown by doubling.
   */
  #appended: Buffer = EMPTY;
  #appendedLength = 0;
  /** The UTF-8 length of every known text, with a comma between two: the message list's length in a checkpoint. */
  #knownBytes = 0;
  readonly #maxLineBytes: number;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /**
   * Takes the text of `message` from `line`, the valid `message_append` record `{seq, ts, type, payload: {message}}`
   * that the writer encoded for it (any other shape is not noted, and the next checkpoint is encoded in full). Past
   * the line-size limit the texts cannot make a checkpoint: only their count of bytes is kept.
   */
  noteAppended(line: Uint8Array, seq: number, ts: string, payload: Record<string, unknown>): void {
    const message = payload.message;
    if (typeof message !== 'object' || message === null || !onlyMessage(payload)) return;
    // `{"seq":<seq>,"ts":"<ts>` then MIDDLE: ASCII, so lengths in characters are lengths in bytes. A `ts` that needed
    // an escape moves MIDDLE, which then does not match.
    const bytes = asBuffer(line);
    const middle = 14 + String(seq).length + ts.length;
    const start = middle + MIDDLE.length;
    const end = bytes.length - 3;
    if (end <= start || bytes[end] !== CLOSE_BRACE || bytes[end + 1] !== CLOSE_BRACE || bytes[end + 2] !== LF) return;
    if (bytes.compare(MIDDLE, 0, MIDDLE.length, middle, start) !== 0) return;
    this.#messages.push(message);
    const comma = this.#messages.length > 1 ? 1 : 0;
    const length = end - start;
    this.#knownBytes += comma + length;
    if (this.#knownBytes > this.#maxLineBytes) {
      this.#appended = EMPTY;
      this.#appendedLength = 0;
      return;
    }
    const at = this.#appendedLength;
    if (at + comma + length > this.#appended.length) this.#grow(at + comma + length);
    const appended = this.#appended;
    if (comma === 1) appended[at] = COMMA;
    bytes.copy(appended, at + comma, start, end);
    this.#appendedLength = at + comma + length;
  }

  #grow(least: number): void {
    const grown = Buffer.allocUnsafeSlow(Math.max(least, 2 * this.#appended.length, 1024));
    this.#appended.copy(grown, 0, 0, this.#appendedLength);
    this.#appended = grown;
  }

  /**
   * The checkpoint's line and the value it holds (`written` is `record` itself: its values were parsed from lines or
   * checked as they were appended), or a {@link WriterError} as the checked encoder gives: `line_too_long`,
   * `invalid_record`.
   */
  encode(record: CheckpointRecord, file: string): EncodedRecord {
    const { messages, runs } = record.payload;
    if (messages.length === 0 || !this.#knows(messages)) return this.#full(record, file);
    const head = headOf(record);
    const opened = head.length;
    if (this.#knownBytes > this.#maxLineBytes)
      throw tooLong(file, opened + this.#knownBytes, this.#maxLineBytes, 'at least ');

    // The record without its messages: its envelope and run index validated, checked and encoded as any record's.
    const thin = {
      seq: record.seq,
      ts: record.ts,
      type: record.type,
      payload: { messages: [], runs },
      ...(record.epoch === undefined ? {} : { epoch: record.epoch }),
    };
    const thinLine = asBuffer(encodeParsedRecord(thin, CHECKPOINT_RULE, Number.MAX_SAFE_INTEGER, file).bytes);
    // The head is ASCII (digits, an RFC 3339 stamp, names): its length in bytes is its length in characters. A line
    // that does not begin with it (a stamp that needed an escape) takes the full encoding.
    if (thinLine.toString('latin1', 0, opened) !== head) return this.#full(record, file);
    const length = thinLine.length + this.#knownBytes;
    if (length - 1 > this.#maxLineBytes) throw tooLong(file, length - 1, this.#maxLineBytes, '');

    const line = Buffer.allocUnsafe(length);
    thinLine.copy(line, 0, 0, opened);
    line.set(this.#lineText, opened);
    this.#appended.copy(line, opened + this.#lineText.length, 0, this.#appendedLength);
    const end = opened + this.#knownBytes;
    thinLine.copy(line, end, opened);
    this.#remember(messages, line, opened, end);
    return { bytes: line, written: record as unknown as Record<string, unknown>, valid: true };
  }

  /** True when `messages` are the known messages themselves, in order, no more and no fewer. */
  #knows(messages: readonly object[]): boolean {
    const known = this.#messages;
    if (messages.length !== known.length) return false;
    for (let i = 0; i < known.length; i += 1) if (messages[i] !== known[i]) return false;
    return true;
  }

  #full(record: CheckpointRecord, file: string): EncodedRecord {
    const encoded = encodeParsedRecord(
      record as unknown as Record<string, unknown>,
      CHECKPOINT_RULE,
      this.#maxLineBytes,
      file,
    );
    const line = asBuffer(encoded.bytes);
    const opened = headOf(record).length;
    this.#remember(record.payload.messages, line, opened, messagesEnd(line, opened));
    return encoded;
  }

  /**
   * Knows `messages` from here on as their text in `line`, from `opened` (after the list's `[`) to `end` (its `]`),
   * a copy of the list since the record keeps its own; or, where that was not found, knows nothing.
   */
  #remember(messages: readonly object[], line: Buffer, opened: number, end: number): void {
    const found = end >= opened && line[opened - 1] === OPEN_BRACKET && line[end] === CLOSE_BRACKET;
    this.#messages = found ? messages.slice() : [];
    this.#lineText = found ? line.subarray(opened, end) : new Uint8Array(0);
    this.#knownBytes = this.#lineText.length;
    this.#appended = EMPTY;
    this.#appendedLength = 0;
  }
}

/** True when `payload`'s only member is `message`. */
function onlyMessage(payload: Record<string, unknown>): boolean {
  for (const key in payload) if (key !== 'message') return false;
  return true;
}

/** The text of a checkpoint line up to and including the `[` that opens its message list. */
function headOf(record: CheckpointRecord): string {
  return `{"seq":${record.seq},"ts":"${record.ts}","type":"checkpoint","payload":{"messages":[`;
}

function tooLong(file: string, length: number, maxLineBytes: number, atLeast: string): WriterError {
  return new WriterError(
    'line_too_long',
    `${file}: the checkpoint record: the record is ${atLeast}${length} bytes long, over the line-size limit of ${maxLineBytes} bytes`,
    file,
  );
}

/** The same bytes as a Buffer, without a copy. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/**
 * Where the message list's `]` is in a checkpoint line whose list opens at `opened`, or -1. What follows the list is
 * `,"runs":[…]}}` and the LF, so it is the last `],"runs":` of the line: inside a JSON string a `"` is escaped, and the
 * run index's entries have no member named `runs` (a message may, which is why the search is from the end).
 */
function messagesEnd(line: Buffer, opened: number): number {
  const at = line.lastIndexOf('],"runs":');
  return at >= opened ? at : -1;
}
