import { rmSync } from 'node:fs';
import { writeStoreFixture } from '../../fixtures/run-store-fixtures.js';
import { generateConflictStore } from '../generate-conflicts.js';
import { truncate } from '../process.js';
import type { ReadResult, Representatives, StartResult } from '../protocol.js';
import { Random } from '../random.js';
import { referenceRepresentatives } from '../reference-representatives.js';
import { freshDir } from './fresh-dir.js';
import type { CheckRecorder } from './record.js';
import type { Session } from './session.js';

// `reader/representatives` (TJ-DERIVE-013, TJ-DERIVE-002, TJ-CONF-050): which record represents a turn's event name
// when shards conflict decides the submitted content, the interruption reason and the assistant message index a reader
// reports, and is invisible in turn states. With feature `representatives` an adapter names them in its `read` answer;
// the harness compares them with the reference reader's on generated stores of conflicting records.

/**
 * Stores per run. Each has at least eight event names with two or more distinct records, and a reader that keeps the
 * first record it read (or the last, or the earliest `created_at`) picks the smallest-bytes one at most one time in two
 * for each: it passes one store with probability at most 2^-8, and the ten stores at most 2^-80.
 */
export const REPRESENTATIVE_STORES = 10;

/** JSON text with object members sorted at every depth: equal for records equal as JSON values (spec §4.6). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** The differences between an adapter's representatives and the reference's, one line each. */
export function compareRepresentatives(expected: Representatives, actual: unknown): string[] {
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
    return [
      `representatives: expected an object of sessions, got ${truncate(JSON.stringify(actual) ?? 'nothing', 200)}`,
    ];
  const failures: string[] = [];
  const got = actual as Record<string, Record<string, Record<string, unknown>> | undefined>;
  for (const sessionId of new Set([...Object.keys(expected), ...Object.keys(got)])) {
    const expectedTurns = expected[sessionId] ?? {};
    const gotTurns = got[sessionId] ?? {};
    for (const turnId of new Set([...Object.keys(expectedTurns), ...Object.keys(gotTurns)])) {
      const want = expectedTurns[turnId] ?? {};
      const have = gotTurns[turnId] ?? {};
      for (const event of new Set([...Object.keys(want), ...Object.keys(have)])) {
        const [a, b] = [want[event], have[event]];
        if (a !== undefined && b !== undefined && canonical(a) === canonical(b)) continue;
        failures.push(
          `${sessionId}/${turnId} ${event}: expected ${a === undefined ? 'none' : truncate(JSON.stringify(a), 300)}, got ${b === undefined ? 'none' : truncate(JSON.stringify(b), 300)}`,
        );
      }
    }
  }
  return failures;
}

/** `reader/representatives`. */
export async function representativesCheck(
  session: Session,
  claims: StartResult,
  seed: number,
  recorder: CheckRecorder,
): Promise<void> {
  await recorder.record(
    'reader/representatives',
    `on ${REPRESENTATIVE_STORES} generated stores of conflicting shards, every turn's representative records are the reference's (smallest bytes)`,
    'reader',
    ['TJ-DERIVE-013', 'TJ-DERIVE-002', 'TJ-CONF-050'],
    async () => {
      if (!claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      if (!(claims.features ?? []).includes('representatives'))
        return { skip: 'feature representatives not claimed: the representative records are not visible' };
      const failures: string[] = [];
      let stores = 0;
      for (let index = 0; index < REPRESENTATIVE_STORES; index++) {
        stores += 1;
        const storeSeed = (seed + 104_729 * (index + 1)) >>> 0;
        const store = generateConflictStore(new Random(storeSeed));
        const root = freshDir('tj-conf-representatives-');
        try {
          writeStoreFixture(root, { files: store.files });
          const expected = await referenceRepresentatives([root]);
          const process = await session.get();
          const result = (await process.request('read', { paths: [root], representatives: true })) as ReadResult;
          const wrong = compareRepresentatives(expected, result.representatives);
          if (wrong.length > 0)
            failures.push(
              `store ${index} (seed ${storeSeed}, run seed ${seed}; ${store.perturbations.join(', ')}): ${wrong.length} difference(s) from the reference`,
              ...wrong.slice(0, 5),
            );
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
        // One failing store shows the defect; the others would only repeat it.
        if (failures.length > 0) break;
      }
      return { failures, situations: stores };
    },
  );
}
