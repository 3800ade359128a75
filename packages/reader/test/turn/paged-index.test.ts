import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PagedIndex } from '../../src/turn/paged-index.js';

describe('PagedIndex', () => {
  it('reads back every entry set, 0 where none was, at scattered places far apart', () => {
    // Places in the growing first page, just past it, and pages far away with none made in between.
    const at = fc.oneof(fc.nat(40), fc.integer({ min: 65_000, max: 66_000 }), fc.nat(50_000_000));
    const entry = fc.tuple(at, fc.nat(0xffff_ffff));
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 50 }), fc.array(at, { maxLength: 20 }), (entries, probes) => {
        const index = new PagedIndex();
        const model = new Map<number, number>();
        for (const [place, value] of entries) {
          index.set(place, value);
          model.set(place, value);
        }
        for (const place of [...model.keys(), ...probes]) expect(index.get(place)).toBe(model.get(place) ?? 0);
      }),
      propertyParameters({ defaultRuns: 200 }),
    );
  });
});
