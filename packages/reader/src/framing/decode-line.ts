import type { CommittedLine } from './line-splitter.js';
import { decodeUtf8, NOT_JSON, NOT_UTF8, parseJsonText } from './parse-line-text.js';
import type { PlainDamage } from './plain-record.js';

/** What one committed line holds. */
export type DecodedLine =
  | { readonly kind: 'blank' }
  | {
      readonly kind: 'record';
      /** The parsed object. */
      readonly value: Record<string, unknown>;
      /** The record's bytes (no BOM, CR or LF): what identical-record and representative checks compare. */
      readonly bytes: Uint8Array;
    }
  | {
      readonly kind: 'damage';
      /** `malformed_line` or `zero_filled_region` (spec §3.3, §3.6). */
      readonly code: 'malformed_line' | 'zero_filled_region';
      /** Why the line is damage, without quoting its content. */
      readonly reason: string;
      /** For `zero_filled_region`: the first run of NUL bytes, as a file offset and a length. */
      readonly nulRun?: { readonly offset: number; readonly length: number };
      /** A complete record found glued after a torn head (spec §3.5), when salvage was asked for and succeeded. */
      readonly salvaged?: {
        readonly value: Record<string, unknown>;
        readonly bytes: Uint8Array;
        readonly headLength: number;
      };
    };

const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Decodes one committed line: strips a BOM at file offset 0 (TJ-FRAME-012) and a CR before the LF (TJ-FRAME-013),
 * recognises blank lines (TJ-FRAME-014), and parses the rest as one JSON object. Anything else is damage (TJ-FRAME-015),
 * with NUL bytes reported as a zero-filled region (TJ-FRAME-028). With `salvage`, a damaged line is searched for a
 * complete record glued after a torn head (TJ-FRAME-025, TJ-FRAME-029). Never throws. `known`: what the caller already
 * found wrong with the line, which has no BOM and no CR (see `safeParsePlainRecord`).
 */
export function decodeLine(line: CommittedLine, salvage: boolean, known?: PlainDamage): DecodedLine {
  let start = 0;
  let bytes = line.bytes;
  if (line.offset === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  if (bytes.length > start && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
  // The common line needs no view of its own: no BOM, no CR.
  const content = start === 0 ? bytes : bytes.subarray(start);
  if (isBlank(content)) return { kind: 'blank' };

  // A line that parses holds no NUL byte (JSON allows none outside strings, nor raw inside them), so the NUL scan
  // below is only needed, and done, for lines that do not parse: the verdict is the same as scanning first.
  const parsed = known === NOT_JSON ? NOT_JSON_LINE : known === NOT_UTF8 ? NOT_UTF8_LINE : parseObject(content);
  if (parsed.ok) return { kind: 'record', value: parsed.value, bytes: content };

  const firstNul = content.indexOf(0);
  if (firstNul >= 0) {
    let end = firstNul;
    while (end < content.length && content[end] === 0) end += 1;
    const nulRun = { offset: line.offset + start + firstNul, length: end - firstNul };
    const found = salvage ? salvageRecord(content, content.lastIndexOf(0) + 1) : undefined;
    const reason = `the line holds ${nulRun.length} NUL byte(s) at offset ${nulRun.offset}`;
    return found === undefined
      ? { kind: 'damage', code: 'zero_filled_region', reason, nulRun }
      : { kind: 'damage', code: 'zero_filled_region', reason, nulRun, salvaged: found };
  }

  const found = salvage ? salvageRecord(content, 1) : undefined;
  return found === undefined
    ? { kind: 'damage', code: 'malformed_line', reason: parsed.reason }
    : { kind: 'damage', code: 'malformed_line', reason: parsed.reason, salvaged: found };
}

function isBlank(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i];
    if (byte !== SPACE && byte !== TAB && byte !== CR && byte !== LF) return false;
  }
  return true;
}

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

const NOT_JSON_LINE: Parsed = { ok: false, reason: 'the line is not valid JSON' };
const NOT_UTF8_LINE: Parsed = { ok: false, reason: 'the line is not valid UTF-8' };

/** Parses bytes as one UTF-8 JSON object; JSON.parse keeps the last of duplicate members (TJ-FRAME-011). */
export function parseObject(bytes: Uint8Array): Parsed {
  const text = decodeUtf8(bytes);
  if (text === NOT_UTF8) return NOT_UTF8_LINE;
  const value = parseJsonText(text);
  if (value === NOT_JSON) return NOT_JSON_LINE;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      reason: `the line is JSON ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}, not an object`,
    };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Finds the record glued at the end of a damaged line: the smallest position p >= `from` whose suffix starts with `{"`
 * and parses as one object (spec §3.5). Only one suffix can be a whole object, and it must start at the brace that
 * matches the line's final `}`; a single backward scan finds that brace, so salvage costs O(line) even for hostile
 * lines full of `{"`.
 */
function salvageRecord(
  content: Uint8Array,
  from: number,
): { value: Record<string, unknown>; bytes: Uint8Array; headLength: number } | undefined {
  const start = matchingOpenBrace(content, from);
  if (start === undefined || start < Math.max(from, 1) || content[start + 1] !== QUOTE) return undefined;
  const suffix = content.subarray(start);
  const parsed = parseObject(suffix);
  return parsed.ok ? { value: parsed.value, bytes: suffix, headLength: start } : undefined;
}

// Scans backward from the last non-whitespace byte, which must be `}`, to the `{` that opens it, skipping strings.
// Inside valid JSON a quote is escaped exactly when an odd number of backslashes precede it.
function matchingOpenBrace(content: Uint8Array, from: number): number | undefined {
  let i = content.length - 1;
  while (i >= from && (content[i] === SPACE || content[i] === TAB)) i -= 1;
  if (i < from || content[i] !== CLOSE_BRACE) return undefined;
  let depth = 0;
  for (; i >= from; i -= 1) {
    const byte = content[i];
    if (byte === QUOTE) {
      // Walk back to the unescaped quote that opens this string.
      for (i -= 1; i >= from; i -= 1) {
        if (content[i] !== QUOTE) continue;
        let slashes = 0;
        while (i - 1 - slashes >= from && content[i - 1 - slashes] === BACKSLASH) slashes += 1;
        if (slashes % 2 === 0) break;
      }
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth += 1;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth -= 1;
      if (depth === 0) return byte === OPEN_BRACE ? i : undefined;
      if (depth < 0) return undefined;
    }
  }
  return undefined;
}
