import type { CommittedLine } from './line-splitter.js';
import { NOT_JSON, parseJsonText } from './parse-json.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const CR = 0x0d;

/** What {@link safeParsePlainRecord} answers for a line with no BOM and no CR whose valid UTF-8 is not JSON. */
export const PLAIN_NOT_JSON: unique symbol = Symbol('plain line, not JSON');

/**
 * The object a plain record line holds: no BOM, no CR before its LF, valid UTF-8 that parses as one JSON object.
 * {@link PLAIN_NOT_JSON} for such a line that is not JSON at all, so that {@link decodeLine} is told and does not parse
 * it a second time; undefined for every other line, which `decodeLine` then examines. For a plain line `decodeLine`
 * returns `{ kind: 'record', value, bytes: line.bytes }`; this returns the same value without the result objects,
 * because it runs once per line read. Internal: not exported from the package.
 */
export function safeParsePlainRecord(line: CommittedLine): Record<string, unknown> | typeof PLAIN_NOT_JSON | undefined {
  const bytes = line.bytes;
  const last = bytes.length - 1;
  if (last < 0 || bytes[last] === CR || (line.offset === 0 && bytes[0] === 0xef)) return undefined;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  const value = parseJsonText(text);
  if (value === NOT_JSON) return PLAIN_NOT_JSON;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
