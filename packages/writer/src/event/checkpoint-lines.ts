import { escapeLineSeparators } from '../append/encode-record.js';
import { deepFreeze } from './deep-freeze.js';

type Payload = Record<string, unknown>;

/**
 * The lines of the automatic checkpoints an event log reserves behind held deltas (TJ-EVENT-006), from the payload of
 * the last one while the state it holds has not changed. A stream of deltas changes neither the message list nor the
 * run index, so each checkpoint between two of its records repeats the last one's payload; with a short list one
 * falls due every `checkpointInterval` records, and encoding it afresh (serialise, walk, validate, freeze) was a
 * third of what a streamed delta cost. The writer says which state a payload holds by a version it moves whenever
 * the list or the index may have changed.
 *
 * A payload is remembered only once the line built from it has been compared, byte for byte, with the line the
 * checked encoder made of the same record: a later line differs from that one in its `seq` and `ts` alone, which the
 * writer makes (digits, an RFC 3339 stamp).
 */
export class CheckpointLines {
  #version = Number.NaN;
  #json = '';
  #jsonBytes = 0;
  #payload: Payload | null = null;
  #bytes = 0;

  /** The payload remembered for state `version`, frozen (a live session hands it to subscribers), or null. */
  payloadAt(version: number): Payload | null {
    return version === this.#version ? this.#payload : null;
  }

  /** The UTF-8 length, LF included, of the last line {@link CheckpointLines.line} built. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The line (LF included) of the checkpoint `seq` with `ts` and the payload remembered. */
  line(seq: number, ts: string): string {
    const head = `{"seq":${seq},"ts":"${ts}","type":"checkpoint","payload":`;
    this.#bytes = head.length + this.#jsonBytes + 2;
    return `${head}${this.#json}}\n`;
  }

  /**
   * Remembers `payload` for state `version`, once the line built from it for `seq` and `ts` is `checked` (the checked
   * encoder's line of that record); otherwise forgets what it held.
   */
  remember(version: number, payload: Payload, seq: number, ts: string, checked: Uint8Array): void {
    this.#version = Number.NaN;
    this.#payload = null;
    const json = escapeLineSeparators(JSON.stringify(payload));
    const jsonBytes = Buffer.byteLength(json, 'utf8');
    this.#json = json;
    this.#jsonBytes = jsonBytes;
    if (!Buffer.from(this.line(seq, ts), 'utf8').equals(checked)) return;
    this.#version = version;
    this.#payload = deepFreeze(payload);
  }
}
