import type { Report } from '@turnjournal/schema';

/**
 * The JSON form of a report, `JSON.stringify(report, null, 2)` and a final LF, in pieces: one per top-level member and
 * one per element of a top-level array (files, sessions, findings, …). A renderer writes them one by one, so no single
 * string holds a large store's report (issue 11: 5 M findings overflowed `Array.join` with a RangeError), and memory
 * follows the largest element. Internal to the CLI; the output is byte-identical to the one-string form.
 */
export function* reportJsonChunks(report: Report): Generator<string> {
  const members = Object.entries(report).filter(([, value]) => value !== undefined);
  yield '{\n';
  for (let i = 0; i < members.length; i += 1) {
    const [key, value] = members[i] as [string, unknown];
    const comma = i < members.length - 1 ? ',' : '';
    if (Array.isArray(value) && value.length > 0) {
      yield `  ${JSON.stringify(key)}: [\n`;
      for (let j = 0; j < value.length; j += 1)
        yield `    ${indented(value[j], '    ')}${j < value.length - 1 ? ',' : ''}\n`;
      yield `  ]${comma}\n`;
    } else {
      yield `  ${JSON.stringify(key)}: ${indented(value, '  ')}${comma}\n`;
    }
  }
  yield '}\n';
}

/** A value pretty-printed as JSON.stringify(…, null, 2) would print it `prefix` deep (every line after the first). */
function indented(value: unknown, prefix: string): string {
  // `null` for what JSON.stringify prints as null inside an array (undefined, functions).
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return text.includes('\n') ? text.replaceAll('\n', `\n${prefix}`) : text;
}
