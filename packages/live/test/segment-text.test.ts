// An open segment's text is kept as joined pieces rather than a string grown token by token (src/segment-text.ts: a
// rope node per token cost about 11 bytes per byte of text). Whatever the tokens and whenever it is read, it must read
// as the plain concatenation: property over random tokens (empty ones, ones across the join size, non-ASCII) with
// reads between them, checked against `+=`.
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SegmentText } from '../src/segment-text.js';

const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('token' as const), text: fc.string({ maxLength: 12 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('token' as const),
      // Around and over the join size (16 KiB), so pieces are joined mid-stream and a token can be one by itself.
      text: fc
        .integer({ min: 1, max: 40_000 })
        .map((length) => 'é\u2028x'.repeat(Math.ceil(length / 3)).slice(0, length)),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'read' as const }) },
);

describe('the text of an open segment', () => {
  it('reads as the concatenation of its tokens, whenever read', async () => {
    await checkProperty(
      'live-segment-text',
      fc.property(fc.string({ maxLength: 20 }), fc.array(step, { maxLength: 200 }), (seed, steps) => {
        const text = new SegmentText(seed);
        let expected = seed;
        for (const s of steps) {
          if (s.kind === 'token') {
            text.append(s.text);
            expected += s.text;
          } else expect(text.toString()).toBe(expected);
          expect(text.length).toBe(expected.length);
        }
        expect(text.toString()).toBe(expected);
        // A second read gives the same string, with no join in between.
        expect(text.toString()).toBe(text.toString());
      }),
      { defaultRuns: 200 },
    );
  });
});
