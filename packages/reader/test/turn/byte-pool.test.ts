import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BytePool } from '../../src/turn/byte-pool.js';
import { ownString } from '../../src/turn/own-string.js';

describe('BytePool', () => {
  it('gives every string back as ownString keeps it, across pages and past a page (lone surrogates as U+FFFD)', () => {
    const unit = fc.constantFrom('a', 'é', '中', '\u{1F600}', '\uD800', '\uDC00', '\u0000');
    const text = fc.oneof(
      fc.array(unit, { maxLength: 40 }).map((units) => units.join('')),
      // Longer than a page (256 KiB) now and then: such a string gets a page of its own.
      fc.integer({ min: 200_000, max: 300_000 }).map((n) => 'x'.repeat(n)),
    );
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 60 }), (texts) => {
        const pool = new BytePool();
        const entries = texts.map((t) => pool.add(t));
        expect(entries.map((e) => pool.get(e))).toEqual(texts.map(ownString));
      }),
      propertyParameters({ defaultRuns: 60 }),
    );
  });

  it('keeps 100,000 short strings apart (many pages)', () => {
    const pool = new BytePool();
    const entries = Array.from({ length: 100_000 }, (_, i) => pool.add(`stream-${i.toString(16)}`));
    for (const i of [0, 1, 9_999, 50_000, 99_999])
      expect(pool.get(entries[i] as number)).toBe(`stream-${i.toString(16)}`);
  });
});

describe('BytePool entries', () => {
  it('cost 4 bytes each beyond their bytes: where each starts in its page', () => {
    const pool = new BytePool();
    const entries = 65_536;
    // Turn ids of 29 bytes: 7 pages of 256 KiB.
    for (let i = 0; i < entries; i += 1) pool.add(`20260511T001122Z-${i.toString(16).padStart(12, '0')}`);
    expect(pool.indexBytes).toBe(entries * 4);
    for (const i of [0, 9_038, 9_039, 9_040, 65_535])
      expect(pool.get(i)).toBe(`20260511T001122Z-${i.toString(16).padStart(12, '0')}`);
  });
});
