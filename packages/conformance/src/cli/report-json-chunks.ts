import type { StreamedReport } from '@turnjournal/reader';
import type { Report } from '@turnjournal/schema';

/**
 * How deep the pieces go: the report, its lists (files, sessions, findings…), their elements, and a session's turns,
 * so that one session of a million turns is written turn by turn too. Below that a value is one piece.
 */
const PIECE_DEPTH = 4;

/**
 * The JSON form of a report, `JSON.stringify(report, null, 2)` and a final LF, in pieces no larger than one element of
 * a top-level list or one turn of a session, the lazy lists of a {@link StreamedReport} included. A writer prints them
 * one after the other, so no single string holds a large store's report (issue 11: 5 M findings overflowed
 * `Array.join` with a RangeError), and memory follows the largest piece. Internal to the CLI; the output is
 * byte-identical to the one-string form.
 */
export function reportJsonChunks(report: Report | StreamedReport): Generator<string> {
  return jsonDocumentChunks(report, PIECE_DEPTH);
}

/**
 * Any JSON document, `JSON.stringify(value, null, 2)` and a final LF, in pieces down to `depth` levels (1: the
 * document's members; 2: the elements of its lists…); iterables are printed as arrays and iterated once.
 */
export function* jsonDocumentChunks(value: unknown, depth: number): Generator<string> {
  yield* jsonChunks(value, '', depth);
  yield '\n';
}

/** `value` as JSON.stringify(value, null, 2) prints it `indent` deep, in pieces down to `depth` levels. */
function* jsonChunks(value: unknown, indent: string, depth: number): Generator<string> {
  if (depth === 0 || typeof value !== 'object' || value === null || hasToJson(value)) {
    yield indented(value, indent);
    return;
  }
  const inner = `${indent}  `;
  let first = true;
  if (Symbol.iterator in value) {
    // An array, or a lazy list of a streamed report: printed as an array; what JSON cannot hold there is null.
    for (const item of value as Iterable<unknown>) {
      yield first ? `[\n${inner}` : `,\n${inner}`;
      first = false;
      yield* jsonChunks(
        item === undefined || typeof item === 'function' || typeof item === 'symbol' ? null : item,
        inner,
        depth - 1,
      );
    }
    yield first ? '[]' : `\n${indent}]`;
    return;
  }
  for (const [key, member] of Object.entries(value)) {
    // Members JSON leaves out.
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    yield `${first ? '{\n' : ',\n'}${inner}${JSON.stringify(key)}: `;
    first = false;
    yield* jsonChunks(member, inner, depth - 1);
  }
  yield first ? '{}' : `\n${indent}}`;
}

function hasToJson(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/** A value pretty-printed as JSON.stringify(…, null, 2) would print it `indent` deep (every line after the first). */
function indented(value: unknown, indent: string): string {
  // `null` for what JSON.stringify prints as null inside an array (undefined, functions).
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return indent !== '' && text.includes('\n') ? text.replaceAll('\n', `\n${indent}`) : text;
}
