// `holdDelta` (`@turnjournal/writer/_internals`, the live hub's held `chat.delta` without a promise) must leave an
// event log exactly as `append('chat.delta', …, { hold: true })` through the writers' checked encoder leaves it: the
// same bytes in the file (automatic checkpoints included, TJ-EVENT-006), the same seqs, the same state; and where it
// cannot answer at once it must change nothing and leave the answer, refusal included, to that `append`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runIndexEntries } from '@turnjournal/reader/_internals';
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { holdDelta, lastCheckpoint } from '../../src/_internals/index.js';
import { type EventLog, openEventLog } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const T0 = Date.parse('2026-05-11T00:00:00.000Z');

/**
 * A delta's payload as an instance of a class: the delta fast path takes plain objects only, so the oracle log
 * encodes it with the checked encoder (serialise, parse back, validate), which writes the same members in order.
 */
class CheckedPayload {
  readonly request_id: string;
  readonly message_id: string;
  readonly text: string;
  constructor(requestId: string, messageId: string, text: string) {
    this.request_id = requestId;
    this.message_id = messageId;
    this.text = text;
  }
}

/** The UTF-8 length, LF included, of the line of checkpoint `seq` with `ts` and `payload` (TJ-FRAME-007 escapes). */
/** The epoch of both logs (spec §6.7): their files are compared byte for byte, and every checkpoint carries it. */
const EPOCH = 'hold-delta-oracle';

function checkpointLineBytes(seq: number, ts: string, payload: unknown): number {
  const json = JSON.stringify({ seq, ts, type: 'checkpoint', payload, epoch: EPOCH });
  return Buffer.byteLength(json.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')) + 1;
}

/** What an append answered: its seq, or the refusal's code. */
async function outcome(append: Promise<{ seq: number }>): Promise<number | string> {
  try {
    return (await append).seq;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

const text = fc.oneof(
  fc.string({ unit: 'binary-ascii', maxLength: 24 }),
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({
    unit: fc.constantFrom('tok ', 'é', '\u2028', '"', '\\', '\n', '\ud800', '😀', '\u007f', '\u0080'),
    maxLength: 8,
  }),
);

type Op =
  | { readonly kind: 'delta'; readonly text: string; readonly to: 'open' | 'other' | 'run' }
  | { readonly kind: 'segment' | 'tool' | 'message' | 'next-run' | 'idle' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('delta' as const), text, to: fc.constant('open' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('delta' as const),
      text,
      to: fc.constantFrom('other' as const, 'run' as const),
    }),
  },
  // Records that change the message list or the run index (and so the next checkpoint's payload), or close the segment.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('segment' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tool' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('message' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('next-run' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('idle' as const) }) },
);

/** A log whose clock reads `clock.now`, which the test moves one millisecond per operation. */
async function openAt(dir: string, clock: { now: number }, checkpointInterval: number): Promise<EventLog> {
  return openEventLog({
    file: join(dir, 'events.jsonl'),
    durability: 'none',
    clock: () => clock.now,
    checkpointInterval,
    // The subject's and the oracle's files are compared byte for byte: one epoch for both (spec §6.7).
    newEpoch: () => EPOCH,
  });
}

describe('holdDelta (the synchronous held delta)', () => {
  it('leaves the file, the seqs and the state exactly as append with hold through the checked encoder', async () => {
    let fast = 0;
    let fellBack = 0;
    let checkpoints = 0;
    let kept = 0;
    await checkProperty(
      'hold-delta-oracle',
      fc.asyncProperty(fc.array(op, { maxLength: 80 }), fc.integer({ min: 1, max: 8 }), async (ops, interval) => {
        const clock = { now: T0 };
        const subjectDir = tempDir();
        const oracleDir = tempDir();
        const subject = await openAt(subjectDir, clock, interval);
        const oracle = await openAt(oracleDir, clock, interval);
        try {
          let run = 1;
          let segment = 0;
          const start = async (log: EventLog) => {
            await log.chatStarted({ requestId: `r${run}` });
            await log.segmentStarted({ requestId: `r${run}`, messageId: `r${run}.a${segment}` });
          };
          await start(subject);
          await start(oracle);
          for (const [n, step] of ops.entries()) {
            clock.now += 1;
            const requestId = `r${run}`;
            if (step.kind === 'delta') {
              const target = step.to === 'run' ? 'r0' : requestId;
              const messageId = step.to === 'other' ? `${requestId}.x` : `${requestId}.a${segment}`;
              const ts = new Date(clock.now).toISOString();
              const seq = holdDelta(subject, target, messageId, step.text, ts);
              let got: number | string = seq;
              if (seq >= 0 && subject.lastSeq === seq + 1) {
                // A checkpoint behind the delta: the payload handed to the live session, when the writer kept it,
                // is what the list and the run index are (and what the file's line holds, compared below).
                checkpoints += 1;
                const last = lastCheckpoint(subject);
                if (last !== null) {
                  kept += 1;
                  const { payload, lineBytes } = last;
                  expect(payload).toEqual({
                    messages: subject.snapshot().messages,
                    runs: runIndexEntries(subject.runs().values()),
                  });
                  expect(Object.isFrozen(payload) && Object.isFrozen(payload.runs)).toBe(true);
                  expect(lineBytes).toBe(checkpointLineBytes(seq + 1, ts, payload));
                }
              }
              if (seq < 0) {
                fellBack += 1;
                // What the live pipeline does when the synchronous path declines: the append with hold answers.
                const payload = { request_id: target, message_id: messageId, text: step.text };
                got = await outcome(subject.append('chat.delta', payload, { hold: true }));
              } else fast += 1;
              const want = await outcome(
                oracle.append(
                  'chat.delta',
                  new CheckedPayload(target, messageId, step.text) as unknown as Record<string, unknown>,
                  { hold: true },
                ),
              );
              expect(got, `op ${n}`).toEqual(want);
            } else {
              for (const log of [subject, oracle]) {
                if (step.kind === 'segment')
                  await log.segmentStarted({ requestId, messageId: `${requestId}.a${segment + 1}` });
                else if (step.kind === 'tool') await log.toolStart({ requestId, toolCallId: `c${n}`, tool: 't' });
                else if (step.kind === 'message') {
                  // A message changes the list; a new segment lets the deltas (and their checkpoints) go on.
                  await log.appendMessage({ role: 'assistant', content: `m${n}`, id: `${requestId}.m${n}` });
                  await log.segmentStarted({ requestId, messageId: `${requestId}.a${segment + 1}` });
                } else if (step.kind === 'next-run') {
                  await log.chatDone({ requestId });
                  await log.chatStarted({ requestId: `r${run + 1}` });
                  await log.segmentStarted({ requestId: `r${run + 1}`, messageId: `r${run + 1}.a0` });
                } else await log.idle();
              }
              if (step.kind === 'segment' || step.kind === 'message') segment += 1;
              if (step.kind === 'next-run') {
                run += 1;
                segment = 0;
              }
            }
            expect(subject.lastSeq).toBe(oracle.lastSeq);
          }
          await subject.flush();
          await oracle.flush();
          expect(readFileSync(join(subjectDir, 'events.jsonl'))).toEqual(readFileSync(join(oracleDir, 'events.jsonl')));
          expect(subject.snapshot()).toEqual(oracle.snapshot());
          expect(subject.runs()).toEqual(oracle.runs());
          expect(subject.checkpointFailure).toBe(oracle.checkpointFailure);
        } finally {
          await subject.close();
          await oracle.close();
        }
      }),
      { defaultRuns: 80 },
    );
    // Both paths were taken: the test says nothing about the synchronous one if it always declined.
    expect(fast).toBeGreaterThan(100);
    expect(fellBack).toBeGreaterThan(0);
    // Checkpoints fell due behind held deltas, and most repeated the last one's payload (the remembered line).
    expect(checkpoints).toBeGreaterThan(20);
    expect(kept).toBeGreaterThan(checkpoints / 2);
  });

  describe('declines, changing nothing, where append must answer', () => {
    async function streaming(options: { durability?: 'none' | 'group'; maxLineBytes?: number } = {}) {
      const log = await openEventLog({
        file: join(tempDir(), 'events.jsonl'),
        durability: options.durability ?? 'none',
        ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
      });
      await log.chatStarted({ requestId: 'r1' });
      await log.segmentStarted({ requestId: 'r1', messageId: 'r1.a1' });
      return log;
    }
    const TS = '2026-05-11T00:00:00.000Z';

    /** `holdDelta` answers -1 and the log's seq, state and file stay as they were. */
    async function declines(log: EventLog, call: () => number) {
      await log.idle();
      const seq = log.lastSeq;
      const snapshot = log.snapshot();
      expect(call()).toBe(-1);
      expect(log.lastSeq).toBe(seq);
      expect(log.snapshot()).toEqual(snapshot);
    }

    it('outside the open segment of the active run, with a ts the writer would not make, over the line limit', async () => {
      const log = await streaming({ maxLineBytes: 200 });
      expect(holdDelta(log, 'r1', 'r1.a1', 'fits', TS)).toBeGreaterThan(0);
      await declines(log, () => holdDelta(log, 'r1', 'r1.a2', 'x', TS));
      await declines(log, () => holdDelta(log, 'r2', 'r1.a1', 'x', TS));
      await declines(log, () => holdDelta(log, 'r1', 'r1.a1', 'x', '2026-05-11 00:00:00'));
      await declines(log, () => holdDelta(log, 'r1', 'r1.a1', 'x'.repeat(200), TS));
      await declines(log, () => holdDelta(log, 'r1', 'r1.a1', 42 as unknown as string, TS));
      await log.toolStart({ requestId: 'r1', toolCallId: 'c1', tool: 't' });
      await declines(log, () => holdDelta(log, 'r1', 'r1.a1', 'x', TS));
      // And the append answers: the refusals a caller of append gets.
      await expect(
        log.append('chat.delta', { request_id: 'r1', message_id: 'r1.a1', text: 'x' }, { hold: true }),
      ).rejects.toMatchObject({ code: 'illegal_transition' });
      await log.chatDone({ requestId: 'r1' });
      await declines(log, () => holdDelta(log, 'r1', 'r1.a1', 'x', TS));
      await log.close();
      expect(holdDelta(log, 'r1', 'r1.a1', 'x', TS)).toBe(-1);
    });

    it('on a log that does not hold lines (group mode), and while a compaction has the file', async () => {
      const group = await streaming({ durability: 'group' });
      await declines(group, () => holdDelta(group, 'r1', 'r1.a1', 'x', TS));
      await group.close();
      const log = await streaming();
      const compaction = log.compact({ retentionSeconds: 0 });
      const seq = log.lastSeq;
      expect(holdDelta(log, 'r1', 'r1.a1', 'x', TS)).toBe(-1);
      expect(log.lastSeq).toBe(seq);
      await compaction;
      expect(holdDelta(log, 'r1', 'r1.a1', 'after', TS)).toBe((seq ?? -1) + 1);
      await log.close();
    });
  });

  it('lastCheckpoint: the checkpoint an append reserved, with its line length, until the state changes', async () => {
    const clock = { now: T0 };
    const dir = tempDir();
    const log = await openAt(dir, clock, 3);
    await log.chatStarted({ requestId: 'r1' });
    await log.appendMessage({ role: 'user', content: 'line\u2028separated, ünïcode' });
    expect(lastCheckpoint(log)).toBeNull();
    // The third record since the start: an automatic checkpoint is reserved behind it (interval 3).
    await log.appendMessage({ role: 'tool', content: 'result', tool_call_id: 'c1' });
    const checkpointSeq = log.lastSeq as number;
    const last = lastCheckpoint(log);
    await log.flush();
    const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.length > 0);
    const line = lines.find((l) => (JSON.parse(l) as { seq: number }).seq === checkpointSeq) as string;
    expect(JSON.parse(line)).toMatchObject({ type: 'checkpoint' });
    expect(last).not.toBeNull();
    expect(last?.payload).toEqual((JSON.parse(line) as { payload: unknown }).payload);
    expect(last?.lineBytes).toBe(Buffer.byteLength(line) + 1);
    expect(Object.isFrozen(last?.payload) && Object.isFrozen(last?.payload.runs)).toBe(true);
    // A record that changes the list or the runs leaves it stale: none is answered.
    await log.appendMessage({ role: 'assistant', content: 'more' });
    expect(lastCheckpoint(log)).toBeNull();
    await log.close();
  });
});
