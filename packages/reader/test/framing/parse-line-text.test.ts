// `parseJsonText` answers what `JSON.parse` answers, for any text: the checks it makes before parsing (the first and
// last characters after JSON's whitespace) only skip parses that would throw; `decodeUtf8` answers what the fatal
// decoder answers. And a journal of damaged lines gets the findings it got when each one cost an exception or two.
import { isUtf8 } from 'node:buffer';
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { decodeUtf8, NOT_JSON, NOT_UTF8, parseJsonText } from '../../src/framing/parse-line-text.js';
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

  it('decodeUtf8 and isUtf8 answer what the fatal UTF-8 decoder answers, for any bytes', async () => {
    const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    await checkProperty(
      'decode-utf8-agrees',
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 40 }),
          fc.string({ unit: 'binary' }).map((text) => new TextEncoder().encode(text)),
        ),
        (bytes) => {
          let expected: string | typeof NOT_UTF8;
          try {
            expected = fatal.decode(bytes);
          } catch {
            expected = NOT_UTF8;
          }
          expect(decodeUtf8(bytes)).toEqual(expected);
          // What a file's lines are checked with once a few were not UTF-8 (`Utf8Failures`): the same verdict.
          expect(isUtf8(bytes)).toBe(expected !== NOT_UTF8);
        },
      ),
      { defaultRuns: 2000 },
    );
  });

  it('leaves the stack trace limit as it found it, after a parse, a decode and their failures', () => {
    const limit = Error.stackTraceLimit;
    parseJsonText('{"a":1}');
    parseJsonText('{"a":}');
    decodeUtf8(new Uint8Array([0x61]));
    decodeUtf8(new Uint8Array([0xff]));
    expect(Error.stackTraceLimit).toBe(limit);
  });

  it('a journal of damaged lines of every kind gets one finding per line, as before', async () => {
    const kinds = ['x', '{', '{"a":', '[1,', '{x}', '"', 'nul', '1e', '  ', '{"a":1}'].map((line) => Buffer.from(line));
    // Not UTF-8: a lone continuation byte, a cut two-byte sequence, an overlong encoding, a surrogate's bytes. From
    // the ninth such line on, the file's lines are checked with `isUtf8` first: the records after them still read.
    const notUtf8 = [[0xff], [0x7b, 0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80]].map((bytes) => Buffer.from(bytes));
    const round = Buffer.concat([...kinds, ...notUtf8].flatMap((line) => [line, Buffer.from('\n')]));
    const items = await readAll(tempFile(Buffer.concat(Array.from({ length: 1000 }, () => round))));
    const found = items.flatMap((item) => (item.kind === 'finding' ? [item.finding] : []));
    const malformed = found.filter((f) => f.code === 'malformed_line');
    // Every kind but the blank line and the record is damage: 8 not JSON, 4 not UTF-8, a round.
    expect(malformed.filter((f) => f.message === 'the line is not valid JSON')).toHaveLength(8000);
    expect(malformed.filter((f) => f.message === 'the line is not valid UTF-8')).toHaveLength(4000);
    expect(malformed).toHaveLength(12000);
    expect(found.filter((f) => f.code === 'blank_line')).toHaveLength(1000);
    expect(items.filter((item) => item.kind === 'record')).toHaveLength(1000);
  });
});

describe('failures that say nothing about the text are thrown, not answered (issue 34)', () => {
  it('parseJsonText throws what JSON.parse throws other than a SyntaxError', () => {
    const parse = vi.spyOn(JSON, 'parse').mockImplementationOnce(() => {
      throw new RangeError('out of memory, simulated');
    });
    try {
      expect(() => parseJsonText('{"a":1}')).toThrow(RangeError);
      expect(parseJsonText('{"a":')).toBe(NOT_JSON);
    } finally {
      parse.mockRestore();
    }
  });

  it('decodeUtf8 throws what the decoder throws other than its refusal of invalid bytes', () => {
    const decode = vi.spyOn(TextDecoder.prototype, 'decode').mockImplementationOnce(() => {
      throw new RangeError('out of memory, simulated');
    });
    try {
      expect(() => decodeUtf8(new Uint8Array([0x61]))).toThrow(RangeError);
      expect(decodeUtf8(new Uint8Array([0xff]))).toBe(NOT_UTF8);
    } finally {
      decode.mockRestore();
    }
  });
});
