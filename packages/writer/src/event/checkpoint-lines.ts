import { deepFreeze } from './deep-freeze.js';

type Payload = Record<string, unknown>;

const CLOSE_BRACE = 0x7d;
const LF = 0x0a;

/**
 * The lines of the automatic checkpoints an event log reserves behind held deltas (TJ-EVENT-006), from the payload of
 * the last one it reserved (behind a delta or any other record) while the state it holds has not changed. A stream of
 * deltas changes neither the message list nor the run index, so each checkpoint between two of its records repeats the
 * last one's payload; with a short list one falls due every `checkpointInterval` records, and encoding it afresh
 * (serialise, walk, validate, freeze) was a third of what a streamed delta cost. The writer says which state a payload
 * holds by a version it moves whenever the list or the index may have changed.
 *
 * A payload is remembered with the text the checked encoder wrote for it, read back from that line, once the line is
 * known to have the head this class builds: a later line differs from that one in its `seq` and `ts` alone, which the
 * writer makes (digits, an RFC 3339 stamp).
 */
export class CheckpointLines {
  #version = Number.NaN;
  /** The payload's text in the checked line it was remembered from (a view into that line, shared with its writer). */
  #text: Uint8Array = new Uint8Array(0);
  #payload: Payload | null = null;
  #bytes = 0;

  /** The payload remembered for state `version`, frozen (a live session hands it to subscribers), or null. */
  payloadAt(version: number): Payload | null {
    return version === this.#version ? this.#payload : null;
  }

  /** The UTF-8 length, LF included, of the last line {@link CheckpointLines.line} built or remembered. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The line (LF included) of the checkpoint `seq` with `ts` and the payload remembered. */
  line(seq: number, ts: string): Uint8Array {
    const head = headOf(seq, ts);
    const text = this.#text;
    const line = Buffer.allocUnsafe(head.length + text.length + 2);
    line.write(head, 0, 'latin1');
    line.set(text, head.length);
    line[line.length - 2] = CLOSE_BRACE;
    line[line.length - 1] = LF;
    this.#bytes = line.length;
    return line;
  }

  /**
   * Remembers `payload` for state `version`, from `checked`, the checked encoder's line of the checkpoint `seq` with
   * `ts` and that payload: its text is the line's from `"payload":` on, read back rather than serialised again (a
   * second serialisation of the whole list), and kept as a view into it. Remembered only when the line has the head {@link CheckpointLines.line}
   * builds, so a later line differs from it in `seq` and `ts` alone; otherwise forgets what it held.
   */
  remember(version: number, payload: Payload, seq: number, ts: string, checked: Uint8Array): void {
    this.#version = Number.NaN;
    this.#payload = null;
    const head = headOf(seq, ts);
    const line = Buffer.from(checked.buffer, checked.byteOffset, checked.length);
    // The head is ASCII (digits, an RFC 3339 stamp, names): its length in bytes is its length in characters.
    const end = line.length - 2;
    if (end <= head.length || line[end] !== CLOSE_BRACE || line[end + 1] !== LF) return;
    if (line.toString('latin1', 0, head.length) !== head) return;
    this.#text = line.subarray(head.length, end);
    this.#bytes = line.length;
    this.#version = version;
    this.#payload = deepFreeze(payload);
  }
}

/** The text of a checkpoint line before its payload. */
function headOf(seq: number, ts: string): string {
  return `{"seq":${seq},"ts":"${ts}","type":"checkpoint","payload":`;
}
