import { join } from 'node:path';
import { checkStore, type EventLogSnapshot, replayEventLog } from '@turnjournal/reader';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Durability,
  type EventLog,
  escapeLineSeparators,
  type OpenEventLogOptions,
  openEventLog,
} from '../support/internals.js';
import { readLinesOf } from '../support/space.js';
import { tempDir } from '../support/temp.js';
import { fullFold, propertyParameters, readerViews, seqsOf, seriousFindings, steppingClock } from './support.js';

type Op =
  | { readonly kind: 'append'; readonly content: string }
  | { readonly kind: 'appendOdd'; readonly content: string }
  | { readonly kind: 'burst'; readonly count: number }
  | { readonly kind: 'edit'; readonly at: number }
  | { readonly kind: 'replace'; readonly count: number }
  | { readonly kind: 'undo'; readonly n: number }
  | { readonly kind: 'start' }
  | { readonly kind: 'segment' }
  | { readonly kind: 'delta'; readonly text: string }
  | { readonly kind: 'tool' }
  | { readonly kind: 'finish'; readonly how: 'done' | 'error' | 'cancelled' }
  | { readonly kind: 'ack' }
  | { readonly kind: 'extension' }
  | { readonly kind: 'checkpoint' }
  | { readonly kind: 'reopen' }
  | { readonly kind: 'compact' };

const text = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('line\u2028sep', 'é ✓', '"quoted"\n', 'lone \ud800 surrogate', '],"runs":['),
);

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: text.map((content) => ({ kind: 'append', content }) as const) },
  { weight: 1, arbitrary: text.map((content) => ({ kind: 'appendOdd', content }) as const) },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 6 }).map((count) => ({ kind: 'burst', count }) as const) },
  { weight: 2, arbitrary: fc.nat(8).map((at) => ({ kind: 'edit', at }) as const) },
  { weight: 1, arbitrary: fc.nat(3).map((count) => ({ kind: 'replace', count }) as const) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => ({ kind: 'undo', n }) as const) },
  { weight: 3, arbitrary: fc.constant({ kind: 'start' } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'segment' } as const) },
  { weight: 3, arbitrary: text.map((t) => ({ kind: 'delta', text: t }) as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'tool' } as const) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('done', 'error', 'cancelled').map((how) => ({ kind: 'finish', how }) as const),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'ack' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'extension' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'checkpoint' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' } as const) },
  { weight: 3, arbitrary: fc.constant({ kind: 'compact' } as const) },
);

/** Runs `call` and checks it is refused with `illegal_transition` when `applies` is false. */
async function attempt(applies: boolean, call: () => Promise<unknown>): Promise<void> {
  if (applies) await call();
  else await expect(call()).rejects.toMatchObject({ code: 'illegal_transition' });
}

function comparable(snapshot: EventLogSnapshot) {
  return {
    messages: snapshot.messages,
    lastSeq: snapshot.lastSeq,
    activeRun: snapshot.activeRun,
    overlay: snapshot.overlay,
  };
}

/**
 * Every checkpoint line of `file` is the line the checked encoder makes of its record (`JSON.stringify`, separators
 * escaped), byte for byte, and holds the message list the records before it give (TJ-EVENT-007): the writer builds
 * most checkpoints from text it already has (`CheckpointEncoder`), and this is what it must come to.
 */
function checkpointsAsEncoded(file: string): void {
  let messages: unknown[] | null = null;
  for (const line of readLinesOf(file).toString('utf8').split('\n')) {
    if (line.length === 0) continue;
    const record = JSON.parse(line) as { type: string; payload?: Record<string, unknown> };
    const payload = record.payload ?? {};
    if (record.type === 'checkpoint') {
      expect(line).toBe(escapeLineSeparators(JSON.stringify(record)));
      // A compacted log begins with a checkpoint: the list before it is that checkpoint's.
      if (messages !== null) expect(payload.messages).toEqual(messages);
      messages = [...(payload.messages as unknown[])];
    } else if (messages === null && ['message_append', 'message_edit', 'undo'].includes(record.type)) {
      messages = [];
    }
    if (messages === null) continue;
    if (record.type === 'message_append') messages.push(payload.message);
    else if (record.type === 'message_edit' && Array.isArray(payload.messages)) messages = [...payload.messages];
    else if (record.type === 'message_edit') messages[payload.index as number] = payload.message;
    else if (record.type === 'undo') messages.length = Math.max(0, messages.length - ((payload.n as number) ?? 1));
  }
}

describe('event log writer against the reader (property)', () => {
  it('the reader folds exactly what the writer holds, seqs stay gap-free and check finds nothing (TJ-EVENT-003, TJ-EVENT-007, TJ-REPLAY-007, TJ-RET-014)', async () => {
    const parameters = propertyParameters();
    let compactions = 0;
    let reopens = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          interval: fc.integer({ min: 1, max: 8 }),
          durability: fc.constantFrom<Durability>('every', 'group', 'none'),
          ops: fc.array(opArbitrary, { minLength: 10, maxLength: 60 }),
        }),
        async ({ interval, durability, ops }) => {
          const file = join(tempDir('tj-event-prop-'), 's1', 'events.jsonl');
          const options: OpenEventLogOptions = {
            file,
            durability,
            checkpointInterval: interval,
            clock: steppingClock(),
          };
          let log: EventLog = await openEventLog(options);
          let runs = 0;
          const toAck: string[] = [];
          let firstSeq = 0;
          try {
            for (const op of ops) {
              const view = log.snapshot();
              const length = view.messages.length;
              const active = view.activeRun?.requestId;
              switch (op.kind) {
                case 'append':
                  await log.appendMessage({ role: 'user', content: op.content });
                  break;
                case 'appendOdd':
                  // Members of its own, one of them named like the checkpoint's run index, after an array.
                  await log.appendMessage({ role: 'tool', content: op.content, tags: [op.content], runs: [{ n: 1 }] });
                  break;
                case 'burst': {
                  const acks = await Promise.all(
                    Array.from({ length: op.count }, (_, i) =>
                      log.appendMessage({ role: 'assistant', content: `b${i}` }),
                    ),
                  );
                  const seqs = acks.map((ack) => ack.seq);
                  for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
                  break;
                }
                case 'edit':
                  await attempt(length > 0, () =>
                    log.editMessage(length === 0 ? op.at : op.at % length, { role: 'x' }),
                  );
                  break;
                case 'replace':
                  await log.replaceMessages(
                    Array.from({ length: op.count }, (_, i) => ({ role: 'system', content: i })),
                  );
                  break;
                case 'undo':
                  await attempt(op.n <= length, () => log.undo(op.n));
                  break;
                case 'start':
                  await attempt(active === undefined, () => log.chatStarted({ requestId: `r${runs}`, model: 'm' }));
                  if (active === undefined) runs += 1;
                  break;
                case 'segment':
                  await attempt(active !== undefined, () =>
                    log.segmentStarted({ requestId: active ?? 'none', messageId: `seg${log.lastSeq}` }),
                  );
                  break;
                case 'delta': {
                  const segment = view.overlay?.messageId;
                  await attempt(segment !== undefined, () =>
                    log.delta({ requestId: active ?? 'none', messageId: segment ?? 'none', text: op.text }),
                  );
                  break;
                }
                case 'tool':
                  await attempt(active !== undefined, async () => {
                    const requestId = active ?? 'none';
                    await log.toolStart({ requestId, toolCallId: 'c', tool: 'sh', args: [1] });
                    await log.toolResult({ requestId, toolCallId: 'c', output: 'ok' });
                    await log.toolEnd({ requestId, toolCallId: 'c', isError: false });
                  });
                  break;
                case 'finish': {
                  const requestId = active ?? 'none';
                  await attempt(active !== undefined, () =>
                    op.how === 'done'
                      ? log.chatDone({ requestId })
                      : op.how === 'error'
                        ? log.chatError({ requestId, error: { message: 'boom' } })
                        : log.chatCancelled({ requestId, reason: 'user' }),
                  );
                  if (active !== undefined) toAck.push(active);
                  break;
                }
                case 'ack': {
                  // Clients confirm every finished run they hold; an ack for the running one is refused.
                  for (const requestId of toAck.splice(0)) await log.ack(requestId, { clientId: 'c1' });
                  if (active !== undefined) await attempt(false, () => log.ack(active));
                  break;
                }
                case 'extension':
                  await log.append('x.test.note', { n: log.lastSeq });
                  break;
                case 'checkpoint':
                  await log.checkpoint();
                  break;
                case 'reopen': {
                  await log.close();
                  log = await openEventLog(options);
                  reopens += 1;
                  // Recovery from the tail rebuilds exactly the state the writer had (TJ-EVENT-004, TJ-REPLAY-011).
                  expect(comparable(log.snapshot())).toEqual(comparable(view));
                  break;
                }
                case 'compact': {
                  const report = await log.compact({ now: Date.parse('2100-01-01T00:00:00Z'), retentionSeconds: 0 });
                  if (report.compacted) {
                    compactions += 1;
                    firstSeq = report.firstRetainedSeq as number;
                    const replay = await replayEventLog(file, { after: firstSeq - 2 });
                    expect(replay.kind === 'snapshot' && replay.reason).toBe('compacted');
                  }
                  expect(log.snapshot()).toEqual(view);
                  break;
                }
              }
            }
            await log.idle();
            const mine = log.snapshot();
            await log.close();
            const seqs = seqsOf(file);
            expect(seqs).toEqual(seqs.map((_, i) => firstSeq + i));
            expect(mine.lastSeq).toBe(seqs.length === 0 ? null : (seqs.at(-1) as number));
            const { full, recovered, check } = await readerViews(file);
            expect(comparable(full)).toEqual(comparable(mine));
            expect(comparable(recovered)).toEqual(comparable(full));
            expect(full.findings).toEqual([]);
            expect(seriousFindings(check)).toEqual([]);
            checkpointsAsEncoded(file);
          } finally {
            await log.close();
          }
        },
      ),
      parameters,
    );
    // The generator reaches the interesting paths (not a vacuous pass) whenever it runs a meaningful number of cases.
    if ((parameters.numRuns ?? 0) >= 50) {
      expect(compactions).toBeGreaterThan(0);
      expect(reopens).toBeGreaterThan(0);
    }
  }, 120_000);

  it('an empty log has no last seq and no findings (TJ-EVENT-003)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file });
    await log.close();
    expect((await fullFold(file)).lastSeq).toBeNull();
    expect((await checkStore([file])).findings).toEqual([]);
  });
});
