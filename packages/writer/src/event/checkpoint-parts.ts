import { type EncodedRecord, encodeParsedRecord, type RecordRule } from '../append/encode-checked.js';

const PART_RULE: RecordRule = { family: 'event', type: 'checkpoint.part' };
/**
 * What a part's messages take at most, unless one message is longer: reading a part parses it whole, twice on open (the
 * backward scan checks it is a valid record, the fold reads it). With parts of the line-size limit (16 MiB), opening a
 * long transcript peaked far higher over the process's baseline than with 1 MiB parts (bench/results/history.md,
 * "Figures that were in code comments").
 */
const PART_BYTES = 1024 * 1024;
/** Room on each line for what surrounds the messages: `{"seq":…,"ts":"…","type":"checkpoint.part","payload":{…}}`. */
const ENVELOPE_BYTES = 256;
/** Tries at packing the parts before giving up: a pack is re-done tighter when escapes made a part longer than planned. */
const PACKINGS = 4;

/** A checkpoint as the event log builds it: `payload.messages` and whatever else it carries (the run index). */
export interface CheckpointToSplit {
  readonly seq: number;
  readonly ts: string;
  readonly payload: { readonly messages: readonly object[] } & Readonly<Record<string, unknown>>;
  readonly [member: string]: unknown;
}

/**
 * Encodes `checkpoint`, whose line is over `maxLineBytes`, as a split checkpoint (spec §6.2, TJ-EVENT-028,
 * TJ-EVENT-030): `checkpoint.part` records from `checkpoint.seq` on, with consecutive seqs, each line within the
 * limit, whose messages in order are the checkpoint's; every member but the messages (the run index, an envelope
 * member such as an epoch) goes on the last part only, so the reader that finds the last part has all of it. Each part
 * is validated and checked as any record is (its messages were parsed from lines and frozen: the record is its own
 * JSON round trip). Throws the checked encoder's {@link WriterError} (`line_too_long`) when a part cannot fit: one
 * message, or what the last part carries besides messages, over the limit on its own (TJ-EVENT-022).
 *
 * The parts are packed, up to 1 MiB of messages each, by each message's length in UTF-8, which is its length on the line unless a character needs an
 * escape the serialiser adds (TJ-FRAME-007); a part that comes out too long is packed again with less room.
 */
export function encodeCheckpointParts(
  checkpoint: CheckpointToSplit,
  maxLineBytes: number,
  file: string,
): EncodedRecord[] {
  const { seq, ts, type: _type, payload, ...envelope } = checkpoint;
  const { messages, ...carried } = payload;
  const sizes = messages.map((message) => Buffer.byteLength(JSON.stringify(message)) + 1);
  const lastExtra = Buffer.byteLength(JSON.stringify(carried)) + Buffer.byteLength(JSON.stringify(envelope));
  let room = Math.min(maxLineBytes, PART_BYTES) - ENVELOPE_BYTES;
  for (let attempt = 1; ; attempt += 1) {
    const groups = pack(sizes, room, lastExtra);
    const encoded: EncodedRecord[] = [];
    for (const [part, [from, to]] of groups.entries()) {
      const last = part === groups.length - 1;
      const record = {
        seq: seq + part,
        ts,
        type: 'checkpoint.part',
        ...(last ? envelope : {}),
        payload: { part, parts: groups.length, messages: messages.slice(from, to), ...(last ? carried : {}) },
      };
      try {
        encoded.push(encodeParsedRecord(record, PART_RULE, maxLineBytes, file));
      } catch (error) {
        // Escapes made a part of several messages longer than their UTF-8: pack again with less room. A part of one
        // message (or of none) over the limit cannot be helped.
        if (attempt === PACKINGS || !isTooLong(error) || to - from <= 1) throw error;
        break;
      }
    }
    if (encoded.length === groups.length) return encoded;
    room = Math.floor(room * 0.75);
  }
}

/**
 * Index ranges `[from, to)` of the messages in each part: as many as fit in `room` bytes, in order; the last part also
 * holds `lastExtra` bytes (a part of no messages of its own when they do not fit beside its messages). At least two.
 */
function pack(sizes: readonly number[], room: number, lastExtra: number): [number, number][] {
  const groups: [number, number][] = [];
  let from = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i += 1) {
    const size = sizes[i] as number;
    if (i > from && bytes + size > room) {
      groups.push([from, i]);
      from = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (from < sizes.length) groups.push([from, sizes.length]);
  if (groups.length === 0 || bytes + lastExtra > room) groups.push([sizes.length, sizes.length]);
  if (groups.length === 1) groups.unshift([0, 0]);
  return groups;
}

function isTooLong(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'line_too_long';
}
