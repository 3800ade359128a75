import { isUtf8 } from 'node:buffer';
import type { CommittedLine } from './line-splitter.js';
import { decodeUtf8, NOT_JSON, NOT_UTF8, parseJsonText } from './parse-line-text.js';

const CR = 0x0d;

/** Lines of a file found not UTF-8 before the others are checked with `isUtf8` first (see {@link Utf8Failures}). */
const CHECK_AFTER = 8;

/**
 * How many lines of one file were not UTF-8. The fatal decoder answers such a line with an exception, which costs
 * far more than `isUtf8`'s answer even without a stack trace; but `isUtf8` before every decode would cost a valid line
 * a second pass over its bytes. So a file pays for it only after {@link CHECK_AFTER} lines that were not UTF-8: a
 * journal of such lines is checked several times faster, and a valid file never changes path (bench/results/history.md,
 * "Figures that were in code comments").
 */
export class Utf8Failures {
  count = 0;
}

/**
 * What {@link safeParsePlainRecord} found wrong with a line that has no BOM and no CR: its bytes are not UTF-8, or its
 * text is not JSON. {@link decodeLine} is told, and does not decode or parse the line a second time.
 */
export type PlainDamage = typeof NOT_UTF8 | typeof NOT_JSON;

/**
 * The object a plain record line holds: no BOM, no CR before its LF, valid UTF-8 that parses as one JSON object.
 * A {@link PlainDamage} for such a line that is not UTF-8, or not JSON at all; undefined for every other line, which
 * `decodeLine` then examines. For a plain line `decodeLine` returns `{ kind: 'record', value, bytes: line.bytes }`;
 * this returns the same value without the result objects, because it runs once per line read. `failures` counts the
 * lines of the file that were not UTF-8. Internal: not exported from the package.
 */
export function safeParsePlainRecord(
  line: CommittedLine,
  failures: Utf8Failures,
): Record<string, unknown> | PlainDamage | undefined {
  const bytes = line.bytes;
  const last = bytes.length - 1;
  if (last < 0 || bytes[last] === CR || (line.offset === 0 && bytes[0] === 0xef)) return undefined;
  const text = failures.count >= CHECK_AFTER && !isUtf8(bytes) ? NOT_UTF8 : decodeUtf8(bytes);
  if (text === NOT_UTF8) {
    failures.count += 1;
    return NOT_UTF8;
  }
  const value = parseJsonText(text);
  if (value === NOT_JSON) return NOT_JSON;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
