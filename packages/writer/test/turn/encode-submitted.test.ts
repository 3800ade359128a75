// The turn writer's fast path for `submitted` (src/turn/encode-submitted.ts) must write the line the generic checked
// encoder writes, byte for byte, and leave everything else to it: whatever the generic path refuses, the fast path
// declines. Property over arbitrary members (strings of every kind of UTF-16 unit, null, absent, non-strings) and
// arbitrary clock readings (fractions, -0, huge and unsafe integers, NaN, infinities).
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeCheckedRecord } from '../../src/append/encode-checked.js';
import { encodeSubmittedLine } from '../../src/turn/encode-submitted.js';
import type { SubmitInput } from '../../src/turn/turn-journal-inputs.js';
import { submittedRecord } from '../../src/turn/turn-rules.js';

const LIMIT = 16 * 1024 * 1024;
const SESSION = 'conv-1';
const TURN = '20260511T001122Z-c9bd17bc9fc0';

/** What `submit` wrote before the fast path: the generic encoder's bytes, or its refusal's code. */
function generic(input: SubmitInput, now: number, limit = LIMIT): Uint8Array | string {
  try {
    const record = submittedRecord(SESSION, TURN, input, () => now, 'j.jsonl');
    return encodeCheckedRecord(record, { family: 'turn', type: 'submitted' }, limit, 'j.jsonl').bytes;
  } catch (error) {
    return (error as { code: string }).code;
  }
}

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({
    unit: fc.constantFrom('\u2028', '\u2029', '"', '\\', '\n', '\u0000', '\ud800', '\udfff', 'a', 'é', '😀'),
    maxLength: 12,
  }),
);
/** A member as a caller may give it at run time, typed or not. */
const member = fc.oneof(
  { weight: 6, arbitrary: text },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.boolean(), fc.constant({}), fc.constant(['x'])) },
);
const clock = fc.oneof(
  fc.constantFrom(1778458282123, 0, -0, 1e25, 2 ** 53 * 1000, 9007199254740.991e3, Number.NaN, Infinity, -Infinity),
  fc.double(),
  fc.integer(),
  fc.nat({ max: 4102444800000 }),
);

describe('submitted fast path (encodeSubmittedLine)', () => {
  it('writes the generic encoder’s bytes, or declines where the generic path refuses or needs its checks', async () => {
    let taken = 0;
    await checkProperty(
      'submitted-fast-path',
      fc.property(
        fc.record({
          content: text,
          streamId: member,
          workspace: member,
          model: member,
          modelProvider: member,
          role: member,
        }),
        clock,
        fc.boolean(),
        (fields, now, small) => {
          const input = fields as unknown as SubmitInput;
          const limit = small ? 200 : LIMIT;
          const fast = encodeSubmittedLine(SESSION, TURN, input, now, limit);
          const slow = generic(input, now, limit);
          if (fast === undefined) return;
          taken += 1;
          expect(slow).toBeInstanceOf(Uint8Array);
          expect(Buffer.from(fast).toString('utf8')).toBe(Buffer.from(slow as Uint8Array).toString('utf8'));
          expect(Buffer.from(fast).equals(Buffer.from(slow as Uint8Array))).toBe(true);
        },
      ),
      { defaultRuns: 1000 },
    );
    // The comparison ran on a good share of the cases, not on a few.
    expect(taken).toBeGreaterThan(50);
  });

  it('takes the plain submission a server makes, with and without its optional members', () => {
    const inputs: SubmitInput[] = [
      { content: 'hello' },
      { content: 'a\u2028b', role: 'assistant', streamId: null, workspace: '/w', model: 'm', modelProvider: null },
      { content: '', streamId: 's', role: undefined },
    ];
    for (const input of inputs) {
      const fast = encodeSubmittedLine(SESSION, TURN, input, 1778458282123, LIMIT);
      expect(fast).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(fast as Uint8Array).equals(Buffer.from(generic(input, 1778458282123) as Uint8Array))).toBe(
        true,
      );
    }
  });

  it('leaves to the generic path what it refuses and what needs its checks', () => {
    const now = 1778458282123;
    const declined: [SubmitInput, number][] = [
      [{ content: 'x', streamId: 42 as unknown as string }, now],
      [{ content: 'x', role: 7 as unknown as string }, now],
      [{ content: 'x', attachments: [{ name: 'a', path: '/a', mime: 'text/plain' }] }, now],
      [{ content: 'x', extra: { note: 'kept' } }, now],
      [{ content: 'x' }, Number.NaN],
      [{ content: 'x' }, 1e25],
    ];
    for (const [input, clockReading] of declined)
      expect(encodeSubmittedLine(SESSION, TURN, input, clockReading, LIMIT)).toBeUndefined();
    expect(generic({ content: 'x', streamId: 42 as unknown as string }, now)).toBe('invalid_record');
    expect(generic({ content: 'x' }, Number.NaN)).toBe('invalid_record');
    expect(generic({ content: 'x' }, 1e25)).toBe('invalid_record');
    // Over the line-size limit: the generic path's `line_too_long`.
    const long = { content: 'x'.repeat(300) };
    expect(encodeSubmittedLine(SESSION, TURN, long, now, 200)).toBeUndefined();
    expect(generic(long, now, 200)).toBe('line_too_long');
  });
});
