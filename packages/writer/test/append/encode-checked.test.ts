// The checked encoder (src/append/encode-checked.ts) validates the value a reader will parse from the line it writes
// (TJ-COMPAT-018). For a JSON-clean record it validates a copy (src/append/json-copy.ts) instead of parsing the line
// back; these tests hold both paths to the same contract: the line is `encodeRecord`'s (JSON.stringify of the record
// as given, line separators escaped), `written` is exactly `JSON.parse` of that line, and what either refuses, the
// other refuses with the same code. Values of every kind a caller can pass: undefined, NaN, -0, infinities, unsafe
// integers, BigInts, holes, `toJSON` methods, class instances, dates, `__proto__` members, getters, cycles.
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeCheckedRecord, encodeParsedRecord, type RecordRule } from '../../src/append/encode-checked.js';
import { encodeRecord } from '../../src/append/encode-record.js';
import { jsonCopy, NOT_CLEAN } from '../../src/append/json-copy.js';

const LIMIT = 16 * 1024 * 1024;
const TS = '2026-11-26T17:00:00.000Z';
/** An extension type: any payload object is accepted, so the property exercises the encoding, not the schema. */
const EXTENSION: RecordRule = { family: 'event', type: 'x.acme.note', v1Only: false };
const TOOL_RESULT: RecordRule = { family: 'event', type: 'tool.result', v1Only: false };

/** A plain object whose `toJSON` is not enumerable: not one of its members, but `JSON.stringify` still calls it. */
function hiddenToJson(): object {
  return Object.defineProperty({ kept: 'no' }, 'toJSON', { value: () => 'from a hidden toJSON', enumerable: false });
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

/** Values a caller may hand a writer, JSON-clean or not. */
const hostileLeaf = fc.oneof(
  fc.constantFrom(
    undefined,
    Number.NaN,
    -0,
    Number.POSITIVE_INFINITY,
    2 ** 53,
    -(2 ** 60),
    1e21,
    (): number => 1,
    Symbol('s'),
    new Date(0),
    new Point(1, 2),
    { toJSON: () => 'replaced' },
    { toJSON: () => undefined },
    hiddenToJson(),
    Object.assign([1, 2], { toJSON: () => 'from an array’s toJSON' }),
    JSON.parse('{"__proto__": "own member"}') as unknown,
    Object.create(null) as unknown,
    // biome-ignore lint/suspicious/noSparseArray: a hole is one of the values under test
    [1, , 3],
  ),
  fc.bigInt().map((n) => n),
);
const cleanLeaf = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('\u2028', '\u2029', '\ud800', 'e+', '1234567890123456'),
  fc.double(),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    cleanLeaf,
    cleanLeaf,
    hostileLeaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('toJSON', '1', 'a')), tie('value'), {
      maxKeys: 4,
    }),
  ),
})).value;

function outcome(record: unknown, rule: RecordRule) {
  try {
    const encoded = encodeCheckedRecord(record, rule, LIMIT, 'events.jsonl');
    return { encoded };
  } catch (error) {
    return { code: (error as { code?: string }).code ?? String(error) };
  }
}

function plainOutcome(record: unknown) {
  try {
    return { bytes: encodeRecord(record, LIMIT) };
  } catch (error) {
    return { code: (error as { code?: string }).code ?? String(error) };
  }
}

describe('checked encoder (TJ-COMPAT-018)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes JSON.stringify of the record and checks exactly what a reader parses back, for any value', async () => {
    await checkProperty(
      'checked-encoder-round-trip',
      fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), value, (seq, payload) => {
        const record = { seq, ts: TS, type: 'x.acme.note', payload: { value: payload } };
        const got = outcome(record, EXTENSION);
        const plain = plainOutcome(record);
        if ('code' in plain) {
          // Not encodable at all (a BigInt, an unsafe integer): refused with the same code on every path.
          expect(got).toEqual({ code: plain.code });
          return;
        }
        // The oracle: the check of what a reader parses from the plain line (the round trip, done here by hand).
        const parsed = JSON.parse(Buffer.from(plain.bytes).toString('utf8')) as Record<string, unknown>;
        const oracle = outcome(parsed, EXTENSION);
        if ('code' in oracle) {
          expect(got).toEqual({ code: oracle.code });
          return;
        }
        if ('code' in got) throw new Error(`refused (${got.code}) what the oracle accepts: ${JSON.stringify(parsed)}`);
        expect(Buffer.from(got.encoded.bytes).equals(Buffer.from(plain.bytes))).toBe(true);
        expect(got.encoded.valid).toBe(oracle.encoded.valid);
        // toStrictEqual compares numbers with Object.is and sees undefined members: a -0 or an undefined kept would fail.
        expect(got.encoded.written).toStrictEqual(parsed);
      }),
      { defaultRuns: 400 },
    );
  });

  it('copies exactly the values JSON keeps as they are, and vouches for nothing else', () => {
    expect(jsonCopy({ a: 'x', b: [1, { c: null }], d: -0 })).toEqual({ a: 'x', b: [1, { c: null }], d: 0 });
    const refused: unknown[] = [
      { a: undefined },
      { a: Number.NaN },
      { a: Number.POSITIVE_INFINITY },
      { a: 2 ** 53 },
      { a: 1n },
      { a: () => 1 },
      { a: new Date(0) },
      { a: new Point(1, 2) },
      { a: { toJSON: () => 'x' } },
      { a: hiddenToJson() },
      { a: Object.assign([1, 2], { toJSON: () => 'x' }) },
      { a: JSON.parse('{"__proto__": 1}') },
      // biome-ignore lint/suspicious/noSparseArray: a hole is one of the values under test
      { a: [1, , 3] },
    ];
    for (const [i, hostile] of refused.entries()) expect(jsonCopy(hostile), `case ${i}`).toBe(NOT_CLEAN);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(jsonCopy(cycle)).toBe(NOT_CLEAN);
    expect(() => encodeCheckedRecord(cycle, EXTENSION, LIMIT, 'events.jsonl')).toThrow(
      expect.objectContaining({ code: 'invalid_record' }),
    );
  });

  it('does not parse the line back for a JSON-clean record, and does for any other', () => {
    const parse = vi.spyOn(JSON, 'parse');
    const clean = {
      seq: 3,
      ts: TS,
      type: 'tool.result',
      payload: { request_id: 'r1', tool_call_id: 'c1', output: 'ok' },
    };
    const encoded = encodeCheckedRecord(clean, TOOL_RESULT, LIMIT, 'events.jsonl');
    expect(parse).not.toHaveBeenCalled();
    expect(encoded.written).toEqual(clean);
    // The writer keeps its own copy: the caller's object is neither kept nor frozen.
    expect(encoded.written).not.toBe(clean);
    expect(encoded.written.payload).not.toBe(clean.payload);
    const replaced = { ...clean, payload: { ...clean.payload, output: { toJSON: () => 'from toJSON' } } };
    const viaToJson = encodeCheckedRecord(replaced, TOOL_RESULT, LIMIT, 'events.jsonl');
    expect(parse).toHaveBeenCalledTimes(1);
    expect((viaToJson.written.payload as Record<string, unknown>).output).toBe('from toJSON');
  });

  it('refuses a caller’s tool result that JSON would change into an invalid one, on both paths', () => {
    const base = { seq: 3, ts: TS, type: 'tool.result' };
    const refused: unknown[] = [
      { request_id: 'r1', tool_call_id: 'c1', output: undefined },
      { request_id: 'r1', tool_call_id: 'c1', output: Number.NaN },
      { request_id: 'r1', tool_call_id: 'c1', output: { toJSON: () => undefined } },
      { request_id: 'r1', tool_call_id: undefined, output: 'x' },
      { request_id: 'r1', tool_call_id: 'c1', output: 'x', is_error: Number.NaN },
      { toJSON: () => ({ request_id: 'r1' }) },
    ];
    for (const payload of refused)
      expect(() => encodeCheckedRecord({ ...base, payload }, TOOL_RESULT, LIMIT, 'events.jsonl')).toThrow(
        expect.objectContaining({ code: 'invalid_record' }),
      );
  });

  it('checks the value it writes when a getter answers differently each time it is read', () => {
    let reads = 0;
    const payload = {
      request_id: 'r1',
      tool_call_id: 'c1',
      get output(): unknown {
        reads += 1;
        return reads % 2 === 1 ? 'first' : 42;
      },
    };
    const encoded = encodeCheckedRecord({ seq: 1, ts: TS, type: 'tool.result', payload }, TOOL_RESULT, LIMIT, 'f');
    const line = JSON.parse(Buffer.from(encoded.bytes).toString('utf8')) as Record<string, unknown>;
    expect(encoded.written).toEqual(line);
    expect((line.payload as Record<string, unknown>).output).toBe('first');
  });

  it('refuses a line over the limit with line_too_long naming the file, on the clean path too', () => {
    const record = { seq: 1, ts: TS, type: 'x.acme.note', payload: { text: 'x'.repeat(500) } };
    expect(() => encodeCheckedRecord(record, EXTENSION, 200, 'events.jsonl')).toThrow(
      expect.objectContaining({ code: 'line_too_long', file: 'events.jsonl' }),
    );
  });

  it('refuses a parsed unsafe integer in a checkpoint, found by walking the numbers or, nested deeper, in the text', () => {
    const rule: RecordRule = { family: 'event', type: 'checkpoint' };
    const checkpoint = (content: unknown) => ({
      seq: 9,
      ts: TS,
      type: 'checkpoint',
      payload: {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', content },
        ],
        runs: [],
      },
    });
    // What a foreign writer's line can hold: JSON.parse gives an integer no reader in another language represents.
    const unsafe = JSON.parse('12345678901234567890') as number;
    let deep: unknown = [unsafe];
    for (let i = 0; i < 100; i += 1) deep = [deep];
    for (const content of [unsafe, { nested: [1, unsafe] }, deep])
      expect(() => encodeParsedRecord(checkpoint(content), rule, LIMIT, 'events.jsonl')).toThrow(
        expect.objectContaining({ code: 'invalid_record', message: expect.stringContaining('TJ-FRAME-035') }),
      );
    // Digits in strings and safe integers are not refused, and the line is encodeRecord's.
    let safeDeep: unknown = ['12345678901234567890 e+ 1e+21'];
    for (let i = 0; i < 100; i += 1) safeDeep = [safeDeep, Number.MAX_SAFE_INTEGER];
    for (const content of ['12345678901234567890 e+', Number.MAX_SAFE_INTEGER, safeDeep]) {
      const record = checkpoint(content);
      const encoded = encodeParsedRecord(record, rule, LIMIT, 'events.jsonl');
      expect(Buffer.from(encoded.bytes).equals(Buffer.from(encodeRecord(record, LIMIT)))).toBe(true);
      expect(encoded.written).toBe(record);
    }
  });
});
