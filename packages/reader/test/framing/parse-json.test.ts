// `parseJsonText` answers what `JSON.parse` answers, for any text: the checks it makes before parsing (the first and
// last characters after JSON's whitespace) only skip parses that would throw. And a journal of damaged lines reads
// at the cost of a parse, not of an exception per line.
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NOT_JSON, parseJsonText } from '../../src/framing/parse-json.js';
import { readAll, tempFile } from '../support/temp.js';

function jsonParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/** A JSON text cut, padded with JSON's (and other) whitespace, or with a character swapped in at either end. */
const mangled = fc
  .tuple(
    fc.jsonValue().map((value) => JSON.stringify(value) ?? 'null'),
    fc.constantFrom('', ' ', '\t', '\r\n', '\n ', '\u00a0', '\ufeff'),
    fc.constantFrom('', ' ', '\t', '\r', '\u2028', '\u00a0'),
    fc.nat(),
    fc.constantFrom('cut', 'whole', 'head', 'tail'),
    fc.string({ minLength: 1, maxLength: 1 }),
  )
  .map(([json, before, after, at, how, char]) => {
    if (how === 'cut') return before + json.slice(0, at % (json.length + 1)) + after;
    if (how === 'head') return before + char + json.slice(1) + after;
    if (how === 'tail') return before + json.slice(0, -1) + char + after;
    return before + json + after;
  });

describe('parseJsonText', () => {
  it('answers what JSON.parse answers, for JSON texts mangled at either end and for any string', async () => {
    await checkProperty(
      'parse-json-text-agrees',
      fc.property(fc.oneof(mangled, fc.string(), fc.string({ unit: 'binary' })), (text) => {
        expect(parseJsonText(text)).toEqual(jsonParse(text));
      }),
      { defaultRuns: 2000 },
    );
  });

  it('leaves the stack trace limit as it found it, after a parse and after a failure', () => {
    const limit = Error.stackTraceLimit;
    parseJsonText('{"a":1}');
    parseJsonText('{"a":}');
    expect(Error.stackTraceLimit).toBe(limit);
  });

  it('a journal of damaged lines of every kind gets one malformed_line finding per line, as before', async () => {
    const kinds = ['x', '{', '{"a":', '[1,', '{x}', '"', 'nul', '1e', '  ', '{"a":1}'];
    const path = tempFile(
      kinds
        .map((line) => `${line}\n`)
        .join('')
        .repeat(1000),
    );
    const items = await readAll(path);
    const found = items.flatMap((item) => (item.kind === 'finding' ? [item.finding] : []));
    const records = items.filter((item) => item.kind === 'record');
    // Every kind but the blank line and the record is damage: 8 a round, each "not valid JSON".
    expect(found.filter((f) => f.code === 'malformed_line')).toHaveLength(8000);
    expect(new Set(found.filter((f) => f.code === 'malformed_line').map((f) => f.message))).toEqual(
      new Set(['the line is not valid JSON']),
    );
    expect(found.filter((f) => f.code === 'blank_line')).toHaveLength(1000);
    expect(records).toHaveLength(1000);
  });
});
