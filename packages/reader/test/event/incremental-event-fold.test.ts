import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventLogSnapshot } from '../../src/event/fold-event-log.js';
import { IncrementalEventFold } from '../../src/event/incremental-event-fold.js';
import { readAll, tempFile } from '../support/temp.js';
import { ev, eventLog, foldFile, msg, PROPERTY, PROPERTY_TIMEOUT } from './event-log.js';

const WHERE = { file: 'events.jsonl' };

/** Starts run `r` and its segment `m` in the fold (seqs 0 and 1). */
function openSegment(fold: IncrementalEventFold): void {
  fold.add('chat.started', ev(0, 'chat.started', { request_id: 'r' }), 0, true, WHERE);
  const started = ev(1, 'assistant.segment.started', { request_id: 'r', message_id: 'm' });
  fold.add('assistant.segment.started', started, 1, true, WHERE);
}

describe('IncrementalEventFold: readable between records', () => {
  it(
    'agrees with its own finish() after every record, and finishing mid-way changes nothing (spec §15.3)',
    async () => {
      await fc.assert(
        fc.asyncProperty(eventLog(true), async (log) => {
          const path = tempFile(log.content, 'events.jsonl');
          const fold = new IncrementalEventFold();
          for (const item of await readAll(path)) {
            if (item.kind !== 'record') continue;
            fold.addRecord(item.record, { file: path });
            const state = fold.finish();
            expect(fold.snapshot()).toEqual(eventLogSnapshot(state));
            expect(fold.lastSeq).toBe(state.lastSeq);
            expect(fold.messages).toEqual(state.messages);
            expect(fold.activeRequestId).toBe(state.activeRun?.requestId);
            const unfinished = state.runs.filter((r) => r.status === 'running' || r.status === 'abandoned');
            expect(fold.unfinishedRuns()).toEqual(unfinished.map((r) => r.requestId));
            for (const run of state.runs) expect(fold.isRunFinished(run.requestId)).toBe(run.finishedSeq !== null);
          }
          expect(fold.finish()).toEqual(await foldFile(path).then(({ framing: _, ...state }) => state));
        }),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'folds a valid chat.delta given by its members (addDelta) exactly as the record itself (add)',
    async () => {
      let deltas = 0;
      await fc.assert(
        fc.asyncProperty(eventLog(true), async (log) => {
          const path = tempFile(log.content, 'events.jsonl');
          const byRecord = new IncrementalEventFold();
          const byMembers = new IncrementalEventFold();
          for (const item of await readAll(path)) {
            if (item.kind !== 'record') continue;
            const { record } = item;
            const acceptedByRecord = byRecord.addRecord(record, { file: path });
            const payload = record.value.payload as { request_id?: unknown; message_id?: unknown; text?: unknown };
            const seq = record.value.seq;
            if (
              record.validation.status === 'valid' &&
              record.value.type === 'chat.delta' &&
              typeof seq === 'number' &&
              Number.isSafeInteger(seq) &&
              seq >= 0
            ) {
              deltas += 1;
              const where = { file: path, line: record.line, offset: record.offset };
              const accepted = byMembers.addDelta(
                seq,
                payload.request_id as string,
                payload.message_id as string,
                payload.text as string,
                where,
              );
              expect(accepted).toBe(acceptedByRecord);
            } else byMembers.addRecord(record, { file: path });
            expect(byMembers.snapshot()).toEqual(byRecord.snapshot());
          }
          expect(byMembers.finish()).toEqual(byRecord.finish());
        }),
        PROPERTY,
      );
      // The generated logs hold deltas: otherwise the property compared nothing of addDelta.
      expect(deltas).toBeGreaterThan(20);
    },
    PROPERTY_TIMEOUT,
  );

  it('keeps the overlay growing after a snapshot read it', () => {
    const fold = new IncrementalEventFold();
    openSegment(fold);
    fold.add('chat.delta', ev(2, 'chat.delta', { request_id: 'r', message_id: 'm', text: 'Hel' }), 2, true, WHERE);
    fold.add('chat.delta', ev(3, 'chat.delta', { request_id: 'r', message_id: 'm', text: 'lo' }), 3, true, WHERE);
    expect(fold.snapshot().overlay?.text).toBe('Hello');
    fold.add('chat.delta', ev(4, 'chat.delta', { request_id: 'r', message_id: 'm', text: ', world' }), 4, true, WHERE);
    expect(fold.snapshot().overlay).toEqual({ requestId: 'r', messageId: 'm', text: 'Hello, world' });
    expect(fold.openSegment).toMatchObject({ requestId: 'r', messageId: 'm' });
  });

  it('keeps the text of thousands of tiny deltas, joined in pieces as they come, and each late-read snapshot as of its time', () => {
    // An answer streamed in tiny deltas is joined every few hundred deltas (a string and a slot per delta is what a
    // long answer must not keep): a snapshot taken before a join and read after it still gives the text as of then.
    const fold = new IncrementalEventFold();
    openSegment(fold);
    let text = '';
    const taken: { snapshot: ReturnType<IncrementalEventFold['snapshot']>; text: string }[] = [];
    for (let i = 0; i < 3000; i += 1) {
      const token = String.fromCharCode(97 + (i % 26)).repeat(1 + (i % 3));
      fold.addDelta(2 + i, 'r', 'm', token, WHERE);
      text += token;
      if (i % 251 === 0) taken.push({ snapshot: fold.snapshot(), text });
      if (i % 997 === 0) expect(fold.snapshot().overlay?.text).toBe(text);
    }
    for (const { snapshot, text: then } of taken) expect(snapshot.overlay?.text).toBe(then);
    expect(fold.snapshot().overlay?.text).toBe(text);
  });

  it('gives each snapshot the overlay as of the snapshot, however late it is read, and a segment after it', () => {
    // The overlay is built when read (a live session snapshots the log at every checkpoint while an answer streams): reading it
    // later must still give the text as of the snapshot, whether or not another snapshot joined the parts meanwhile.
    const fold = new IncrementalEventFold();
    const delta = (seq: number, text: string, message_id = 'm') =>
      fold.add('chat.delta', ev(seq, 'chat.delta', { request_id: 'r', message_id, text }), seq, true, WHERE);
    openSegment(fold);
    delta(2, 'a');
    const first = fold.snapshot();
    delta(3, 'b');
    delta(4, 'c');
    const second = fold.snapshot();
    delta(5, 'd');
    expect(first.overlay?.text).toBe('a');
    const third = fold.snapshot();
    fold.add('tool.start', ev(6, 'tool.start', { request_id: 'r', tool_call_id: 't', tool: 'x' }), 6, true, WHERE);
    fold.add(
      'assistant.segment.started',
      ev(7, 'assistant.segment.started', { request_id: 'r', message_id: 'n' }),
      7,
      true,
      WHERE,
    );
    delta(8, 'e', 'n');
    expect(third.overlay).toEqual({ requestId: 'r', messageId: 'm', text: 'abcd' });
    expect(fold.snapshot().overlay).toEqual({ requestId: 'r', messageId: 'n', text: 'e' });
    expect(second.overlay?.text).toBe('abc');
  });

  it('applies a record that is not valid v1 to the sequence checks only (spec §6.5)', () => {
    const fold = new IncrementalEventFold();
    fold.add('message_append', ev(0, 'message_append', { message: msg('user', 'a') }), 0, true, WHERE);
    expect(fold.add('message_append', ev(1, 'message_append', { message: msg('user', 'b') }), 1, false, WHERE)).toBe(
      true,
    );
    expect(fold.messages).toEqual([msg('user', 'a')]);
    expect(fold.lastSeq).toBe(1);
    expect(fold.add('undo', ev(1, 'undo'), 1, true, WHERE)).toBe(false);
    expect(fold.finish().findings.map((f) => f.code)).toEqual(['seq_duplicate']);
  });

  it('changes a list it began without only once told to take it as known', () => {
    const fold = new IncrementalEventFold({ messagesUnknownUntilCheckpoint: true });
    fold.add('message_append', ev(0, 'message_append', { message: msg('user', 'a') }), 0, true, WHERE);
    expect(fold.messages).toEqual([]);
    fold.assumeMessagesKnown();
    fold.add('message_append', ev(1, 'message_append', { message: msg('user', 'b') }), 1, true, WHERE);
    expect(fold.messages).toEqual([msg('user', 'b')]);
  });

  it('knows a run only from its chat.started', () => {
    const fold = new IncrementalEventFold();
    expect(fold.isRunFinished('r')).toBeUndefined();
    fold.add('chat.started', ev(0, 'chat.started', { request_id: 'r' }), 0, true, WHERE);
    expect([fold.isRunFinished('r'), fold.activeRequestId]).toEqual([false, 'r']);
    fold.add('chat.done', ev(1, 'chat.done', { request_id: 'r' }), 1, true, WHERE);
    expect([fold.isRunFinished('r'), fold.activeRequestId]).toEqual([true, undefined]);
  });
});
