import { escapeLineSeparators } from '../append/encode-record.js';
import type { SubmitInput } from './turn-journal-inputs.js';

const LF = 0x0a;

/**
 * The turn writer's fast path for the record every `submit` writes: a `submitted` record whose caller-given members
 * are all strings or null (no `attachments`, no `extra`). The generic checked encoder (`encodeCheckedRecord`) builds
 * the record, serialises it, scans it for unsafe integers, parses the line back and validates the result against the
 * v1 schema (TJ-TURN-015, TJ-COMPAT-018); for this shape each step has a known outcome, so the line is put together
 * from the values instead, and it is the same line, byte for byte: the members in `submittedRecord`'s order,
 * `JSON.stringify` of each string (which escapes lone surrogates), `created_at` as `JSON.stringify` prints a number,
 * U+2028/U+2029 escaped. A string is its own JSON round trip, so what a reader parses back is exactly what was checked
 * here: the strings and nulls `TurnSubmitted` allows (its ids non-empty), and a `created_at` that is a finite number
 * and, when an integer, a safe one (TJ-FRAME-035).
 *
 * Each member of `input` is read once. Returns undefined for anything else (a non-string member, `attachments`,
 * `extra`, a clock that gave no finite number, an unsafe integer, a line over `maxLineBytes`): the caller then takes
 * the generic path with the same clock reading, which writes or refuses as it always did.
 */
export function encodeSubmittedLine(
  sessionId: string,
  turnId: string,
  input: SubmitInput,
  createdAtMs: number,
  maxLineBytes: number,
): Uint8Array | undefined {
  if (input.attachments !== undefined || input.extra !== undefined) return undefined;
  const { content, streamId, workspace, model, modelProvider } = input;
  const role = input.role ?? 'user';
  if (typeof content !== 'string' || typeof role !== 'string') return undefined;
  if (sessionId === '' || turnId === '') return undefined;
  const createdAt = createdAtMs / 1000;
  if (!Number.isFinite(createdAt) || (Number.isInteger(createdAt) && !Number.isSafeInteger(createdAt)))
    return undefined;
  const stream = nullableMember('stream_id', streamId);
  const space = nullableMember('workspace', workspace);
  const named = nullableMember('model', model);
  const provider = nullableMember('model_provider', modelProvider);
  if (stream === null || space === null || named === null || provider === null) return undefined;
  // `${number}` prints what JSON.stringify prints for a finite number (both are Number::toString; -0 prints "0").
  const json = escapeLineSeparators(
    `{"version":1,"event":"submitted","turn_id":${JSON.stringify(turnId)},"session_id":${JSON.stringify(sessionId)}${stream},"created_at":${createdAt},"role":${JSON.stringify(role)},"content":${JSON.stringify(content)}${space}${named}${provider}}`,
  );
  const length = Buffer.byteLength(json, 'utf8');
  if (length > maxLineBytes) return undefined;
  const bytes = Buffer.allocUnsafe(length + 1);
  bytes.write(json, 0, length, 'utf8');
  bytes[length] = LF;
  return bytes;
}

/** `,"name":value` for a string or null, '' when absent, null (not representable here) for anything else. */
function nullableMember(name: string, value: unknown): string | null {
  if (value === undefined) return '';
  if (value === null) return `,"${name}":null`;
  return typeof value === 'string' ? `,"${name}":${JSON.stringify(value)}` : null;
}
