import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayEventLog } from '../../src/event/replay.js';
import { tempFile } from '../support/temp.js';
import { acceptedByOracle, ev, eventLog, line, msg, PROPERTY, PROPERTY_TIMEOUT } from './event-log.js';

const a = msg('user', 'a');
const b = msg('assistant', 'b');

const seqs = (replay: Awaited<ReturnType<typeof replayEventLog>>) =>
  replay.kind === 'records' ? replay.records.map((r) => r.value.seq) : replay.reason;

describe('replayEventLog (spec §15.4)', () => {
  const log = [
    ev(0, 'message_append', { message: a }),
    ev(1, 'x.acme.note', { note: 'n' }),
    ev(2, 'future.thing'),
    ev(2, 'message_append', { message: b }),
    ev(3, 'chat.started', { request_id: 'r' }),
  ];

  it('returns the accepted records after `after` in seq order, unknown and extension types included (TJ-REPLAY-012)', async () => {
    const path = tempFile(log.map(line).join(''));
    expect(seqs(await replayEventLog(path, { after: 0 }))).toEqual([1, 2, 3]);
    const replay = await replayEventLog(path, { after: 1 });
    expect(replay.kind === 'records' && replay.records.map((r) => r.value.type)).toEqual([
      'future.thing',
      'chat.started',
    ]);
    expect(replay.kind === 'records' && replay.lastSeq).toBe(3);
    expect(replay.findings.map((f) => f.code)).toEqual(['unknown_record', 'seq_duplicate']);
  });

  it('replays everything to a client that holds nothing, and nothing to one that holds the last seq', async () => {
    const path = tempFile(log.map(line).join(''));
    expect(seqs(await replayEventLog(path))).toEqual([0, 1, 2, 3]);
    expect(seqs(await replayEventLog(path, { after: -1 }))).toEqual([0, 1, 2, 3]);
    expect(seqs(await replayEventLog(path, { after: 3 }))).toEqual([]);
  });

  it('says `compacted` and returns a snapshot when records after `after` were removed (TJ-REPLAY-013)', async () => {
    const compacted = [ev(40, 'checkpoint', { messages: [a] }), ev(41, 'message_append', { message: b })];
    const path = tempFile(compacted.map(line).join(''));
    expect(await replayEventLog(path, { after: 10 })).toMatchObject({
      kind: 'snapshot',
      reason: 'compacted',
      snapshot: { messages: [a, b], activeRun: null, overlay: null, lastSeq: 41 },
    });
    expect(seqs(await replayEventLog(path))).toBe('compacted');
    expect(seqs(await replayEventLog(path, { after: 38 }))).toBe('compacted');
    expect(seqs(await replayEventLog(path, { after: 39 }))).toEqual([40, 41]);
  });

  it('says `ahead` and returns a snapshot when `after` is past the last accepted seq (TJ-REPLAY-014)', async () => {
    const path = tempFile(log.map(line).join(''));
    expect(await replayEventLog(path, { after: 4 })).toMatchObject({
      kind: 'snapshot',
      reason: 'ahead',
      snapshot: { messages: [a], lastSeq: 3, activeRun: { requestId: 'r', startedSeq: 3 } },
    });
  });

  it('treats an empty log as ahead of any position but none (documented choice)', async () => {
    const path = tempFile('');
    expect(await replayEventLog(path)).toEqual({ kind: 'records', records: [], lastSeq: null, findings: [] });
    expect(seqs(await replayEventLog(path, { after: 0 }))).toBe('ahead');
  });

  it('copies record bytes, so they outlive the read buffer', async () => {
    const path = tempFile(log.map(line).join(''), 'events.jsonl');
    const replay = await replayEventLog(path, { chunkBytes: 8 });
    expect(replay.kind === 'records' && replay.records.map((r) => JSON.parse(Buffer.from(r.bytes).toString()))).toEqual(
      [log[0], log[1], log[2], log[4]],
    );
  });

  it('rejects an `after` that is not an integer >= -1', async () => {
    const path = tempFile('');
    for (const after of [-2, 1.5]) {
      await expect(replayEventLog(path, { after })).rejects.toMatchObject({
        name: 'ReaderError',
        code: 'invalid_option',
      });
    }
  });

  it(
    'returns exactly the records with seq > k for every k the log still holds, and a reason otherwise (TJ-REPLAY-012..014)',
    async () => {
      await fc.assert(
        fc.asyncProperty(eventLog(true), fc.integer({ min: -1, max: 70 }), async (generated, after) => {
          const path = tempFile(generated.content, 'events.jsonl');
          const accepted = acceptedByOracle(generated);
          const first = accepted[0]?.seq;
          const last = accepted.at(-1)?.seq ?? -1;
          const replay = await replayEventLog(path, { after });
          if (after > last) expect(replay).toMatchObject({ kind: 'snapshot', reason: 'ahead' });
          else if (first !== undefined && after + 1 < first)
            expect(replay).toMatchObject({ kind: 'snapshot', reason: 'compacted' });
          else {
            expect(replay.kind).toBe('records');
            expect(replay.kind === 'records' && replay.records.map((r) => r.value)).toEqual(
              accepted.filter((r) => r.seq > after).map((r) => r.value),
            );
          }
        }),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );
});
