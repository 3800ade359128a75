// The window of recent records past its base bounds (TJ-LIVE-030): records from `keepFrom` on stay for subscribers
// still reading, up to the hard byte bound; the arrays grow for them and shrink back, and every record read is the one
// pushed with its seq.
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LiveRecord } from '../src/records.js';
import { RecordRing } from '../src/ring.js';

const CAPACITY = 4;
const MAX_BYTES = 400;
const HARD_BYTES = 2000;

const commit = fc.record({
  count: fc.nat(40),
  /** How far behind the head the slowest subscriber still reading is (null: nobody reading). */
  behind: fc.option(fc.nat(60), { nil: null }),
  size: fc.integer({ min: 10, max: 120 }),
});

function record(seq: number): LiveRecord {
  return { seq, ts: '2026-05-11T00:00:00.000Z', type: 'x.test', payload: { n: seq } };
}

describe('the window past its base bounds (TJ-LIVE-030)', () => {
  it('keeps what subscribers still need under the hard bound, and only the base window for nobody', async () => {
    await checkProperty(
      'live-ring-hold',
      fc.property(fc.array(commit, { maxLength: 40 }), (commits) => {
        const ring = new RecordRing(CAPACITY, MAX_BYTES, HARD_BYTES);
        let next = 0;
        const sizes: number[] = [];
        for (const [at, c] of commits.entries()) {
          const keepFrom = c.behind === null ? Number.POSITIVE_INFINITY : Math.max(0, next - c.behind);
          const firstBefore = ring.firstSeq ?? next;
          ring.beginCommit(at, keepFrom);
          for (let i = 0; i < c.count; i += 1) {
            ring.push(record(next), c.size);
            sizes.push(c.size);
            next += 1;
          }
          if (next === 0) continue;
          const first = ring.firstSeq as number;
          // The newest record is always there, and every seq from the oldest kept on, each the record pushed with it.
          expect(first).toBeLessThanOrEqual(next - 1);
          for (let seq = first; seq < next; seq += 1) expect(ring.get(seq)).toEqual(record(seq));
          expect(ring.get(first - 1)).toBeUndefined();
          expect(ring.size).toBe(next - first);
          expect(ring.bytes).toBeLessThanOrEqual(HARD_BYTES);
          // Eviction happens as records are pushed: after a commit that pushed some, the window is past its base
          // bounds only with records from keepFrom on, and holds every one of those while the hard bound allows.
          if (c.count === 0) continue;
          if (ring.size > CAPACITY || ring.bytes > MAX_BYTES) expect(first).toBeGreaterThanOrEqual(keepFrom);
          // (A record evicted before this commit is gone: the session cuts off a subscriber that needed it.)
          const kept = Math.max(keepFrom, firstBefore);
          if (kept < next && sizes.slice(kept).reduce((a, b) => a + b, 0) <= HARD_BYTES) {
            expect(first).toBeLessThanOrEqual(kept);
            expect(ring.durableAt(next - 1)).toBe(at);
          }
        }
      }),
      { defaultRuns: 200 },
    );
  });
});
