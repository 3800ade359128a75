import { describe, expect, it } from 'vitest';
import { Random } from '../../conformance/src/adapter/random.js';
import { seededRandom } from '../src/index.js';

describe('the one seeded generator', () => {
  it('replays: the same seed gives the same sequence as the kit Random it wraps', () => {
    const a = seededRandom(20260511);
    const b = new Random(20260511);
    const seq = Array.from({ length: 50 }, () => a.int(0, 1_000_000));
    expect(seq).toEqual(Array.from({ length: 50 }, () => b.int(0, 1_000_000)));
    expect(seededRandom(20260511).next()).toBe(seededRandom(20260511).next());
    expect(seededRandom(1).next()).not.toBe(seededRandom(2).next());
  });

  it('is mulberry32 (known first outputs for seed 1), so printed seeds of earlier runs still replay', () => {
    const r = seededRandom(1);
    expect([r.next(), r.next(), r.next()].map((x) => Math.floor(x * 4294967296))).toEqual([
      2693262067, 11749833, 2265367787,
    ]);
  });
});
