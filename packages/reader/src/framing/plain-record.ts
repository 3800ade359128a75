import type { CommittedLine } from './line-splitter.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const CR = 0x0d;

/**
 * The object a plain record line holds: no BOM, no CR before its LF, valid UTF-8 that parses as one JSON object.
 * Undefined for every other line, which {@link decodeLine} then examines. For a plain line `decodeLine` returns
 * `{ kind: 'record', value, bytes: line.bytes }`; this returns the same value without the result objects, because it
 * runs once per line read. Internal: not exported from the package.
 */
export function safeParsePlainRecord(line: CommittedLine): Record<string, unknown> | undefined {
  const bytes = line.bytes;
  const last = bytes.length - 1;
  if (last < 0 || bytes[last] === CR || (line.offset === 0 && bytes[0] === 0xef)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
