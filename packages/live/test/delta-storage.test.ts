// A live session keeps a streamed delta without a record object (src/pending-records.ts, src/ring.ts, the view fold's
// applyDelta): whatever reads it must get what the record would have been. Property over random streams of deltas
// (across segments and runs) and other records, committed in random portions as the pipeline's syncs commit them,
// through a small window that evicts: every record read from the window equals the record appended (and is the same
// object when read again), and the view folded from the members equals the view folded from the records.
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeltaIds } from '../src/delta-ids.js';
import { PendingRecords } from '../src/pending-records.js';
import type { LiveRecord } from '../src/records.js';
import { RecordRing } from '../src/ring.js';
import { ViewFold } from '../src/view-fold.js';

const EMPTY = { messages: [], activeRun: null, overlay: null, lastSeq: null, epoch: null };
const TS = ['2026-05-11T00:00:00.000Z', '2026-05-11T00:00:00.001Z'];

type Step =
  | { readonly kind: 'delta'; readonly text: string; readonly segment: number }
  | { readonly kind: 'record'; readonly type: 'chat.started' | 'assistant.segment.started' | 'tool.start' }
  | { readonly kind: 'commit'; readonly portion: number }
  | { readonly kind: 'read'; readonly back: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('delta' as const),
      text: fc.string({ maxLength: 6 }),
      segment: fc.nat(2),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('record' as const),
      type: fc.constantFrom('chat.started' as const, 'assistant.segment.started' as const, 'tool.start' as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('commit' as const), portion: fc.double({ min: 0, max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('read' as const), back: fc.nat(12) }) },
);

describe('deltas kept by their members', () => {
  it('read back from the window and folded into the view as the records they stand for', async () => {
    await checkProperty(
      'live-delta-storage',
      fc.property(fc.array(step, { maxLength: 120 }), fc.integer({ min: 1, max: 9 }), (steps, capacity) => {
        const pending = new PendingRecords();
        const appended: LiveRecord[] = [];
        const ring = new RecordRing(capacity, 1_000_000);
        const byMembers = new ViewFold(EMPTY, new Map());
        const byRecords = new ViewFold(EMPTY, new Map());
        let run = 0;
        let segment = 'r0.a0';
        let delivered = 0;
        const commit = (count: number) => {
          for (let i = 0; i < count; i += 1) {
            const item = pending.itemAt(i);
            const record = appended[delivered] as LiveRecord;
            expect(pending.seqAt(i)).toBe(record.seq);
            if (item instanceof DeltaIds) {
              const text = pending.textAt(i);
              byMembers.applyDelta(pending.seqAt(i), pending.tsAt(i), item.requestId, item.messageId, text);
              ring.pushDelta(pending.seqAt(i), pending.tsAt(i), item, text, item.size(text));
            } else {
              byMembers.apply(item);
              ring.push(item, pending.sizeAt(i));
            }
            byRecords.apply(structuredClone(record));
            delivered += 1;
          }
          pending.dropFirst(count);
        };
        for (const s of steps) {
          const seq = appended.length;
          const ts = TS[seq % 2] as string;
          if (s.kind === 'delta') {
            // Mostly the open segment; sometimes another id (a delta the view does not add to the open segment).
            const messageId = s.segment === 0 ? `r${run}.x` : segment;
            const record = {
              seq,
              ts,
              type: 'chat.delta',
              payload: { request_id: `r${run}`, message_id: messageId, text: s.text },
            };
            appended.push(record);
            pending.pushDelta(seq, ts, `r${run}`, messageId, s.text);
          } else if (s.kind === 'record') {
            if (s.type === 'chat.started') run += 1;
            if (s.type !== 'tool.start') segment = `r${run}.a${seq}`;
            const payload =
              s.type === 'tool.start'
                ? { request_id: `r${run}`, tool_call_id: `c${seq}`, tool: 't' }
                : s.type === 'chat.started'
                  ? { request_id: `r${run}` }
                  : { request_id: `r${run}`, message_id: segment };
            const record = { seq, ts, type: s.type, payload };
            appended.push(record);
            pending.push(record, 80);
          } else if (s.kind === 'commit') commit(Math.floor(pending.length * s.portion));
          else {
            const at = delivered - 1 - s.back;
            const got = ring.get(at);
            if (got !== undefined) {
              expect(got).toEqual(appended[at]);
              expect(ring.get(at)).toBe(got);
            }
          }
          expect(pending.length).toBe(appended.length - delivered);
        }
        commit(pending.length);
        for (let seq = 0; seq < appended.length; seq += 1) {
          const got = ring.get(seq);
          // The window holds exactly the last `capacity` records.
          expect(got !== undefined).toBe(seq >= appended.length - capacity);
          if (got !== undefined) expect(got).toEqual(appended[seq]);
        }
        expect(byMembers.view('s', undefined, 0, 1)).toEqual(byRecords.view('s', undefined, 0, 1));
        expect([...byMembers.runs.values()]).toEqual([...byRecords.runs.values()]);
      }),
      { defaultRuns: 200 },
    );
  });

  it('keeps the records in order across drops, truncation, wrapping round and growth', () => {
    const pending = new PendingRecords();
    for (let seq = 0; seq < 60; seq += 1) pending.pushDelta(seq, TS[0] as string, 'r1', 'r1.a1', `t${seq}`);
    pending.dropFirst(50);
    pending.truncate(3);
    expect([0, 1, 2].map((i) => [pending.seqAt(i), pending.textAt(i)])).toEqual([
      [50, 't50'],
      [51, 't51'],
      [52, 't52'],
    ]);
    // Past the end of the arrays (64 entries) the list wraps round to their front, then grows when full.
    for (let seq = 53; seq < 200; seq += 1) pending.pushDelta(seq, TS[1] as string, 'r1', 'r1.a1', `t${seq}`);
    expect(Array.from({ length: pending.length }, (_, i) => pending.seqAt(i))).toEqual(
      Array.from({ length: 150 }, (_, i) => i + 50),
    );
    expect(Array.from({ length: pending.length }, (_, i) => pending.textAt(i))).toEqual(
      Array.from({ length: 150 }, (_, i) => `t${i + 50}`),
    );
    expect(pending.tsAt(149)).toBe(TS[1]);
    // A long burst committed (its arrays let go) and a new one: still in order from the first.
    for (let seq = 200; seq < 10_000; seq += 1) pending.pushDelta(seq, TS[0] as string, 'r1', 'r1.a1', `t${seq}`);
    pending.dropFirst(pending.length);
    expect(pending.length).toBe(0);
    for (let seq = 10_000; seq < 10_100; seq += 1) pending.pushDelta(seq, TS[0] as string, 'r1', 'r1.a1', `t${seq}`);
    expect(Array.from({ length: pending.length }, (_, i) => pending.seqAt(i))).toEqual(
      Array.from({ length: 100 }, (_, i) => i + 10_000),
    );
  });
});
