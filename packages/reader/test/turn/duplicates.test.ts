import { describe, expect, it } from 'vitest';
import { loadRecord } from '../../src/file/load-record.js';
import { TurnFold } from '../../src/index.js';
import { readAll, tempFile } from '../support/temp.js';

// Exact duplicates are records equal as JSON values (spec §4.6, TJ-DERIVE-011), whatever their bytes: the fold finds
// them by comparing with the distinct records seen before, read back from disk.
const SESSION = 's1';

async function derive(files: readonly string[], options?: ConstructorParameters<typeof TurnFold>[1]) {
  const fold = new TurnFold(SESSION, options);
  for (const content of files) {
    const path = tempFile(content);
    for (const item of await readAll(path))
      if (item.kind === 'record') fold.add(item.record, { file: path, sessionId: SESSION });
  }
  return fold.finish();
}

const codes = (d: Awaited<ReturnType<typeof derive>>) => d.findings.map((f) => f.code).sort();

const submitted =
  '{"version":1,"event":"submitted","turn_id":"t1","session_id":"s1","created_at":1,"role":"user","content":"é"}';
// The same JSON value: other member order, other spacing, 1.0 for 1, an escape for é.
const sameValue =
  '{ "content":"\\u00e9", "role":"user", "created_at":1.0, "session_id":"s1", "turn_id":"t1", "event":"submitted", "version":1 }';
const other =
  '{"version":1,"event":"submitted","turn_id":"t1","session_id":"s1","created_at":2,"role":"user","content":"é"}';

describe('TurnFold duplicates (TJ-DERIVE-011, TJ-DERIVE-013)', () => {
  it('counts a byte-identical copy once', async () => {
    const d = await derive([`${submitted}\n${submitted}\n`]);
    expect(codes(d)).toEqual(['duplicate_event']);
    expect(d.turns[0]?.state).toBe('submitted');
  });

  it('counts a record equal as a JSON value but with other bytes once, in either order and across shards', async () => {
    for (const files of [[`${submitted}\n${sameValue}\n`], [`${sameValue}\n`, `${submitted}\n`]]) {
      const d = await derive(files);
      expect(codes(d)).toEqual(['duplicate_event']);
    }
  });

  it('tells a copy of an earlier distinct record from a new one among several', async () => {
    const d = await derive([`${other}\n${submitted}\n${sameValue}\n${other}\n`]);
    expect(codes(d)).toEqual(['conflicting_duplicate', 'duplicate_event', 'duplicate_event']);
    const representative = d.turns[0]?.events.submitted;
    // The smallest bytes represent the event: `created_at":1` sorts before `created_at":2`.
    expect(representative === undefined ? undefined : loadRecord(representative.location).created_at).toBe(1);
  });

  it('compares records nested 10,000 levels deep without overflowing the stack (TJ-DERIVE-014, issue 11 defect 0)', async () => {
    const deepArray = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    const deepObject = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const head = '"version":1,"event":"completed","turn_id":"t1","session_id":"s1","created_at":3,"terminal":true';
    const reordered = '"terminal":true,"created_at":3,"session_id":"s1","turn_id":"t1","event":"completed","version":1';
    const d = await derive([
      [
        submitted,
        `{${head},"x":${deepArray},"y":${deepObject}}`,
        // Equal as a JSON value: members in another order.
        `{"y":${deepObject},${reordered},"x":${deepArray}}`,
        // Different, 10,000 levels down.
        `{${head},"x":${deepArray.replace('1', '2')},"y":${deepObject}}`,
        '',
      ].join('\n'),
    ]);
    expect(codes(d)).toEqual(['conflicting_duplicate', 'duplicate_event']);
    expect(d.turns[0]?.state).toBe('completed');
  });

  it('keeps a capped number of findings per code, counts the rest, and still tells copies from new records (TJ-DERIVE-014)', async () => {
    const lines = [submitted];
    const distinct = (n: number) =>
      `{"version":1,"event":"worker_started","turn_id":"t1","session_id":"s1","created_at":${n}}`;
    for (let n = 0; n < 50; n += 1) lines.push(distinct(n));
    // Copies of earlier distinct records, none of them the representative (created_at 0 has the smallest bytes).
    for (let n = 10; n < 20; n += 1) lines.push(distinct(n).replace('"version":1,', '').replace('}', ',"version":1}'));
    const d = await derive([`${lines.join('\n')}\n`], { maxFindingsPerCode: 5 });
    expect(codes(d)).toEqual([...Array(5).fill('conflicting_duplicate'), ...Array(5).fill('duplicate_event')]);
    expect(d.omitted).toEqual({ conflicting_duplicate: 44, duplicate_event: 5 });
    const representative = d.turns[0]?.events.worker_started;
    expect(representative === undefined ? undefined : loadRecord(representative.location).created_at).toBe(0);
  });
});
