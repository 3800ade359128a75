import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ownString } from '../../src/turn/own-string.js';

describe('ownString', () => {
  it('copies a string as a UTF-8 round trip would: equal, with lone surrogates as U+FFFD', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(ownString(text)).toBe(Buffer.from(text, 'utf8').toString('utf8'));
      }),
      propertyParameters({ defaultRuns: 1000 }),
    );
    expect(ownString('\u{1F600}x')).toBe('\u{1F600}x');
    expect(ownString('a\uDC00')).toBe('a\uFFFD');
    expect(ownString('')).toBe('');
  });
});
