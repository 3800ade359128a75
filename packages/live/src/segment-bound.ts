import { DEFAULT_MAX_LINE_BYTES } from '@turnjournal/reader';
import { WriterError } from '@turnjournal/writer';
import { escapeLineSeparators } from '@turnjournal/writer/_internals';
import type { SegmentText } from './segment-text.js';

/** The open assistant segment of a run: the text its message will hold, and a bound of that text's size in it. */
export interface OpenSegment {
  readonly messageId: string;
  readonly text: SegmentText;
  /** At least the bytes `text` takes in the message's line (JSON-escaped UTF-8). */
  bytes: number;
  /** True once `bytes` is counted exactly (delta by delta) rather than bounded by 6 bytes per UTF-16 unit. */
  exact: boolean;
}

const HALF_LINE = DEFAULT_MAX_LINE_BYTES / 2;

/**
 * The bytes `text` takes inside a JSON string in a line: its escaped UTF-8, with U+2028 and U+2029 escaped as the log
 * writes them (TJ-FRAME-007): six bytes each, where `JSON.stringify` leaves three.
 */
function escapedBytes(text: string): number {
  return Buffer.byteLength(escapeLineSeparators(JSON.stringify(text)), 'utf8') - 2;
}

/**
 * The segment's `bytes` once `text` is added, or a `line_too_long` refusal when its message (TJ-LIVE-004) would no
 * longer fit in one line of the log. Each delta fits on its own, but the message holds them all: unchecked, the
 * segment grew past the limit and its message was refused when the segment closed, after the run had been answered
 * as streaming fine — the answer lost from the view. The hub's logs use the default line limit.
 *
 * The bound costs nothing per delta (6 bytes per UTF-16 unit, what an escape can take at most) until it nears the
 * limit (about 2.8 MB of text); from then on the text is measured exactly, once for the segment so far and then delta
 * by delta (never the whole text again: a segment near the limit would cost its length per delta). Measured
 * apart, a surrogate pair split between two deltas counts as two escapes: more than it takes, never less.
 */
export function grownSegmentBytes(
  segment: OpenSegment,
  requestId: string,
  text: string,
  file: () => string,
): number | WriterError {
  // Most segments stay far below the limit: one addition and one comparison per delta (the ids are identifiers of a
  // few hundred characters at most, well within the other half of the line).
  if (!segment.exact) {
    const bound = segment.bytes + 6 * text.length;
    if (bound <= HALF_LINE) return bound;
  }
  // Everything of the message's line but its content: the record's members, the ids (escaped at worst), seq, ts and
  // `"partial":true`, with room to spare.
  const room = DEFAULT_MAX_LINE_BYTES - 6 * (requestId.length + segment.messageId.length) - 512;
  let bytes: number;
  if (segment.exact) bytes = segment.bytes + escapedBytes(text);
  else {
    bytes = segment.bytes + 6 * text.length;
    if (bytes > room) {
      segment.bytes = escapedBytes(segment.text.toString());
      segment.exact = true;
      bytes = segment.bytes + escapedBytes(text);
    }
  }
  if (bytes <= room) return bytes;
  return new WriterError(
    'line_too_long',
    `the delta would make the message of segment "${segment.messageId}" longer than a line of the log ` +
      `(${DEFAULT_MAX_LINE_BYTES} bytes); end the segment (a tool record or the end of the run) first`,
    file(),
  );
}
