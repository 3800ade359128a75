import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { generateConflictStore } from '../../../src/adapter/generate-conflicts.js';
import { Random } from '../../../src/adapter/random.js';
import { referenceRepresentatives } from '../../../src/adapter/reference-representatives.js';
import { freshDir } from '../../../src/adapter/runner/fresh-dir.js';
import { compareRepresentatives, REPRESENTATIVE_STORES } from '../../../src/adapter/runner/representatives.js';
import { readStoreReference, writeStoreFixture } from '../../../src/fixtures/run-store-fixtures.js';

// `reader/representatives` holds an adapter's representatives to the reference reader's on generated stores of
// conflicting shards. Here: the stores are what the check says they are, and a reader keeping the first record it
// meets disagrees with the smallest bytes on every store of a run (TJ-DERIVE-013, TJ-CONF-050).

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const SEED = 20260511;
const stores = Array.from({ length: REPRESENTATIVE_STORES }, (_, index) => {
  const seed = (SEED + 104_729 * (index + 1)) >>> 0;
  return { seed, store: generateConflictStore(new Random(seed)) };
});

/** Session → turn → event → the distinct lines of that event name, in the order a reader meets them. */
function distinctLines(files: readonly { path: string; text: string }[]) {
  const out = new Map<string, string[]>();
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const sessionId = (file.path.split('/')[1] as string).replace(/(~.*)?\.jsonl$/, '');
    for (const line of file.text.split('\n').filter((l) => l !== '')) {
      const record = JSON.parse(line) as { turn_id: string; event: string };
      const key = `${sessionId}/${record.turn_id}/${record.event}`;
      const lines = out.get(key) ?? [];
      if (!lines.includes(line)) lines.push(line);
      out.set(key, lines);
    }
  }
  return out;
}

describe('reader/representatives: generated stores of conflicting shards (TJ-DERIVE-013, TJ-CONF-050)', () => {
  it.each(stores)(
    'store of seed $seed holds valid records and at least eight conflicting event names',
    async ({ store }) => {
      const root = freshDir('tj-representatives-test-');
      roots.push(root);
      writeStoreFixture(root, { files: store.files });
      const reading = await readStoreReference([root]);
      const codes = new Set(reading.findings.map((f) => f.code));
      // Line order is random, so an event may follow a terminal one in its file, and a turn may have both terminals.
      const expectedCodes = ['conflicting_duplicate', 'duplicate_event', 'event_after_terminal', 'terminal_conflict'];
      expect([...codes].filter((c) => !expectedCodes.includes(c) && !c.startsWith('writer_violation'))).toEqual([]);
      const conflicted = [...distinctLines(store.files).values()].filter((lines) => lines.length >= 2);
      expect(conflicted.length).toBeGreaterThanOrEqual(8);
    },
  );

  it('the reference names the smallest-bytes record, and a first-record reader differs from it on every store', async () => {
    for (const { seed, store } of stores) {
      const root = freshDir('tj-representatives-test-');
      roots.push(root);
      writeStoreFixture(root, { files: store.files });
      const representatives = await referenceRepresentatives([root]);
      const first: Record<string, Record<string, Record<string, Record<string, unknown>>>> = {};
      for (const [key, lines] of distinctLines(store.files)) {
        const [sessionId, turnId, event] = key.split('/') as [string, string, string];
        const smallest = [...lines].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))[0] as string;
        expect(representatives[sessionId]?.[turnId]?.[event], `seed ${seed} ${key}`).toEqual(JSON.parse(smallest));
        first[sessionId] ??= {};
        first[sessionId][turnId] ??= {};
        first[sessionId][turnId][event] = JSON.parse(lines[0] as string);
      }
      expect(compareRepresentatives(representatives, first).length, `seed ${seed}`).toBeGreaterThan(0);
    }
  });
});

describe('compareRepresentatives', () => {
  const expected = { s1: { t1: { submitted: { version: 1, event: 'submitted', content: 'a', n: [1, { b: 2 }] } } } };

  it('takes records equal as JSON values as equal, whatever their member order', () => {
    const reordered = { s1: { t1: { submitted: { n: [1, { b: 2 }], content: 'a', event: 'submitted', version: 1 } } } };
    expect(compareRepresentatives(expected, reordered)).toEqual([]);
  });

  it('names a different, a missing and an extra representative', () => {
    expect(compareRepresentatives(expected, { s1: { t1: { submitted: { version: 1, content: 'b' } } } })).toHaveLength(
      1,
    );
    expect(compareRepresentatives(expected, { s1: { t1: {} } })[0]).toMatch(/s1\/t1 submitted: expected .* got none/);
    expect(
      compareRepresentatives(expected, { s1: { t1: { ...expected.s1.t1, completed: { event: 'completed' } } } }),
    ).toHaveLength(1);
    expect(compareRepresentatives(expected, undefined)[0]).toMatch(/expected an object of sessions/);
  });
});
