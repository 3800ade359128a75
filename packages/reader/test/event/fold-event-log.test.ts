import { describe, expect, it } from 'vitest';
import { EventLogFold, eventLogSnapshot } from '../../src/event/fold-event-log.js';
import { readAll, tempFile } from '../support/temp.js';
import { ev, foldFile, line, msg } from './event-log.js';

const fold = async (values: readonly unknown[]) => foldFile(tempFile(values.map(line).join(''), 'events.jsonl'));
const codes = (state: { findings: readonly { code: string; line?: number }[] }) =>
  state.findings.map((f) => `${f.code}@${f.line ?? '-'}`);

const SYSTEM = msg('system', 'You are a coding agent.');
const USER = msg('user', 'Fix the failing test.');
const TOOL = { role: 'tool', content: '1 failed', tool_call_id: 'call_1' };
const R = 'req-8d1c';

// Spec §6.6, line for line.
const EXAMPLE = [
  ev(0, 'message_append', { message: SYSTEM }),
  ev(1, 'chat.started', { request_id: R, model: 'gpt-5', content: 'Fix the failing test.' }),
  ev(2, 'message_append', { message: USER }),
  ev(3, 'tool.start', { request_id: R, tool_call_id: 'call_1', tool: 'shell', args: { cmd: 'pnpm test' } }),
  ev(4, 'tool.result', { request_id: R, tool_call_id: 'call_1', output: '1 failed', is_error: false }),
  ev(5, 'tool.end', { request_id: R, tool_call_id: 'call_1' }),
  ev(6, 'message_append', { message: TOOL }),
  ev(7, 'assistant.segment.started', { request_id: R, message_id: 'msg-31' }),
  ev(8, 'chat.delta', { request_id: R, message_id: 'msg-31', text: 'The test expects ' }),
  ev(9, 'chat.delta', { request_id: R, message_id: 'msg-31', text: 'UTC dates.' }),
  ev(10, 'message_append', { message: { role: 'assistant', content: 'The test expects UTC dates.', id: 'msg-31' } }),
  ev(11, 'chat.done', { request_id: R }),
  ev(12, 'delivery.ack', { request_id: R, client_id: 'pwa-1', through_seq: 11 }),
  ev(13, 'undo', { n: 1 }),
  ev(14, 'checkpoint', { messages: [SYSTEM, USER, TOOL] }),
];

describe('EventLogFold: the example of spec §6.6', () => {
  it('folds the example to its checkpoint, one finished and delivered run, and no findings', async () => {
    const state = await fold(EXAMPLE);
    expect(state.messages).toEqual([SYSTEM, USER, TOOL]);
    expect(state.lastSeq).toBe(14);
    expect(state.firstSeq).toBe(0);
    expect(state.activeRun).toBeNull();
    expect(state.overlay).toBeNull();
    expect(state.runs).toEqual([
      { requestId: R, status: 'done', startedSeq: 1, lastSeq: 11, finishedSeq: 11, delivered: true },
    ]);
    expect(state.undelivered).toEqual([]);
    expect(state.findings).toEqual([]);
  });

  it('shows the open segment of the active run as an overlay mid-stream (TJ-REPLAY-009)', async () => {
    const state = await fold(EXAMPLE.slice(0, 10));
    expect(eventLogSnapshot(state)).toEqual({
      messages: [SYSTEM, USER, TOOL],
      activeRun: { requestId: R, status: 'running', startedSeq: 1, lastSeq: 9 },
      overlay: { requestId: R, messageId: 'msg-31', text: 'The test expects UTC dates.' },
      lastSeq: 9,
      // The example predates epochs (spec §6.7): none.
      epoch: null,
    });
  });
});

describe('EventLogFold: sequence checks (spec §6.5)', () => {
  it('excludes a repeated seq from the fold and reports seq_duplicate (TJ-EVENT-013, TJ-EVENT-014)', async () => {
    const state = await fold([
      ev(0, 'message_append', { message: msg('user', 'a') }),
      ev(1, 'message_append', { message: msg('user', 'b') }),
      ev(0, 'message_append', { message: msg('user', 'again') }),
    ]);
    expect(state.messages).toEqual([msg('user', 'a'), msg('user', 'b')]);
    expect(codes(state)).toEqual(['seq_duplicate@3']);
    expect(state.findings[0]).toMatchObject({ severity: 'error', repairable: false, file: expect.any(String) });
  });

  it('reports a lower seq never accepted as seq_regression and excludes it (TJ-EVENT-013, TJ-EVENT-014)', async () => {
    const state = await fold([
      ev(0, 'message_append', { message: msg('user', 'a') }),
      ev(5, 'message_append', { message: msg('user', 'b') }),
      ev(3, 'undo'),
      ev(5, 'undo'),
    ]);
    expect(state.messages).toHaveLength(2);
    expect(state.lastSeq).toBe(5);
    expect(codes(state)).toEqual(['seq_gap@2', 'seq_regression@3', 'seq_duplicate@4']);
  });

  it('reports a jump of more than one as seq_gap and still folds the record; the first record is never a gap (TJ-EVENT-015)', async () => {
    const state = await fold([
      ev(40, 'checkpoint', { messages: [SYSTEM] }),
      ev(42, 'message_append', { message: USER }),
      ev(43, 'message_append', { message: TOOL }),
    ]);
    expect(state.messages).toEqual([SYSTEM, USER, TOOL]);
    expect(state.firstSeq).toBe(40);
    expect(codes(state)).toEqual(['seq_gap@2']);
  });

  it('lets unknown and extension types take part in the seq checks without folding them (spec §6.5, TJ-COMPAT-005)', async () => {
    const state = await fold([
      ev(0, 'x.acme.note', { note: 'n' }),
      ev(1, 'future.thing'),
      ev(1, 'message_append', { message: USER }),
      ev(2, 'message_append', { message: SYSTEM }),
    ]);
    expect(state.messages).toEqual([SYSTEM]);
    expect(codes(state)).toEqual(['seq_duplicate@3']);
  });

  it('leaves invalid, unsupported-version and other-family records out of the seq checks', async () => {
    const path = tempFile(
      [
        ev(0, 'message_append', { message: 'not a message' }),
        { ...ev(0, 'message_append', { message: USER }), version: 2 },
        { version: 1, event: 'submitted', turn_id: 't', session_id: 's', created_at: 1, role: 'user', content: 'x' },
        ev(0, 'message_append', { message: SYSTEM }),
      ]
        .map(line)
        .join(''),
    );
    const fold = new EventLogFold();
    const accepted = [];
    for (const item of await readAll(path))
      if (item.kind === 'record') accepted.push(fold.add(item.record, { file: path }));
    expect(accepted).toEqual([false, false, false, true]);
    const state = fold.finish();
    expect(state.messages).toEqual([SYSTEM]);
    expect(state.findings).toEqual([]);
  });

  it('names the file, line and offset of a finding, and only the offset when line numbers are unknown (TJ-AUDIT-003)', async () => {
    const content = [ev(0, 'undo'), ev(0, 'undo')].map(line).join('');
    const path = tempFile(content);
    const records = (await readAll(path)).flatMap((i) => (i.kind === 'record' ? [i.record] : []));
    const withLines = new EventLogFold();
    const withoutLines = new EventLogFold();
    for (const r of records) {
      withLines.add(r, { file: path });
      withoutLines.add(r, { file: path, lineNumbers: false });
    }
    const offset = line(ev(0, 'undo')).length;
    expect(withLines.finish().findings.map((f) => [f.code, f.file, f.line, f.offset])).toEqual([
      ['inapplicable_event', path, 1, 0],
      ['seq_duplicate', path, 2, offset],
    ]);
    expect(withoutLines.finish().findings.map((f) => [f.code, f.file, f.line, f.offset])).toEqual([
      ['inapplicable_event', path, undefined, 0],
      ['seq_duplicate', path, undefined, offset],
    ]);
  });
});

describe('EventLogFold: message fold (spec §15.1)', () => {
  const a = msg('user', 'a');
  const b = msg('assistant', 'b');
  const c = msg('user', 'c');

  it('appends, edits by index, replaces by messages, undoes one by default and n when given (TJ-REPLAY-001)', async () => {
    const state = await fold([
      ev(0, 'message_append', { message: a }),
      ev(1, 'message_append', { message: b }),
      ev(2, 'message_edit', { index: 0, message: c }),
      ev(3, 'message_append', { message: a }),
      ev(4, 'undo'),
      ev(5, 'message_append', { message: b }),
      ev(6, 'message_append', { message: c }),
      ev(7, 'undo', { n: 2 }),
    ]);
    expect(state.messages).toEqual([c, b]);
    const replaced = await fold([ev(0, 'message_append', { message: a }), ev(1, 'message_edit', { messages: [b, c] })]);
    expect(replaced.messages).toEqual([b, c]);
    expect(state.findings).toEqual([]);
  });

  it('lets a checkpoint replace the whole list (TJ-REPLAY-001)', async () => {
    const state = await fold([
      ev(0, 'message_append', { message: a }),
      ev(1, 'checkpoint', { messages: [b] }),
      ev(2, 'message_append', { message: c }),
    ]);
    expect(state.messages).toEqual([b, c]);
  });

  it('takes the index form of a message_edit that has both forms (documented choice)', async () => {
    const state = await fold([
      ev(0, 'message_append', { message: a }),
      ev(1, 'message_edit', { index: 0, message: b, messages: [c, c] }),
    ]);
    expect(state.messages).toEqual([b]);
  });

  it('reports an out-of-range edit as inapplicable_event and leaves the list alone (TJ-REPLAY-002)', async () => {
    const state = await fold([
      ev(0, 'message_append', { message: a }),
      ev(1, 'message_edit', { index: 1, message: b }),
    ]);
    expect(state.messages).toEqual([a]);
    expect(codes(state)).toEqual(['inapplicable_event@2']);
    expect(state.findings[0]).toMatchObject({ severity: 'warn', repairable: false });
  });

  it('reports an undo beyond the list as inapplicable_event and empties the list (TJ-REPLAY-002)', async () => {
    const state = await fold([
      ev(0, 'message_append', { message: a }),
      ev(1, 'undo', { n: 3 }),
      ev(2, 'message_append', { message: b }),
    ]);
    expect(state.messages).toEqual([b]);
    expect(codes(state)).toEqual(['inapplicable_event@2']);
  });

  it('ignores message records before the first checkpoint when the list is unknown there', async () => {
    const path = tempFile(
      [ev(0, 'undo', { n: 5 }), ev(1, 'message_append', { message: a }), ev(2, 'checkpoint', { messages: [b] })]
        .map(line)
        .join(''),
    );
    const fold = new EventLogFold({ messagesUnknownUntilCheckpoint: true });
    for (const item of await readAll(path)) if (item.kind === 'record') fold.add(item.record, { file: path });
    const state = fold.finish();
    expect(state.messages).toEqual([b]);
    expect(state.findings).toEqual([]);
  });
});

describe('EventLogFold: runs and snapshot (spec §15.3)', () => {
  const started = (seq: number, id: string) => ev(seq, 'chat.started', { request_id: id });
  const segment = (seq: number, id: string, mid: string) =>
    ev(seq, 'assistant.segment.started', { request_id: id, message_id: mid });
  const delta = (seq: number, id: string, mid: string, text: string) =>
    ev(seq, 'chat.delta', { request_id: id, message_id: mid, text });

  it('builds the overlay from the deltas of the open segment only, in seq order (TJ-REPLAY-009)', async () => {
    const state = await fold([
      started(0, 'r'),
      delta(1, 'r', 'm1', 'before the segment '),
      segment(2, 'r', 'm1'),
      delta(3, 'r', 'm1', 'Hel'),
      delta(4, 'r', 'm2', 'other segment'),
      ev(5, 'checkpoint', { messages: [] }),
      delta(6, 'r', 'm1', 'lo'),
    ]);
    expect(state.overlay).toEqual({ requestId: 'r', messageId: 'm1', text: 'Hello' });
    expect(state.activeRun).toEqual({ requestId: 'r', status: 'running', startedSeq: 0, lastSeq: 6 });
  });

  it.each([
    ['message_append', ev(3, 'message_append', { message: msg('assistant', 'Hi') })],
    ['message_edit', ev(3, 'message_edit', { messages: [] })],
    ['undo', ev(3, 'undo')],
    ['tool.start', ev(3, 'tool.start', { request_id: 'r', tool_call_id: 'c', tool: 'shell' })],
  ])('closes the open segment at %s (spec §15.3)', async (_name, closer) => {
    const state = await fold([
      started(0, 'r'),
      ev(1, 'message_append', { message: msg('user', 'q') }),
      segment(2, 'r', 'm1'),
      closer,
      delta(4, 'r', 'm1', 'late'),
    ]);
    expect(state.overlay).toBeNull();
    expect(state.activeRun?.requestId).toBe('r');
  });

  it('closes the open segment at a chat.started, even of the same request_id (documented choice)', async () => {
    const state = await fold([segment(0, 'r', 'm1'), started(1, 'r'), delta(2, 'r', 'm1', 'x')]);
    expect(state.activeRun?.requestId).toBe('r');
    expect(state.overlay).toBeNull();
  });

  it('opens a new segment at a later assistant.segment.started (spec §15.3)', async () => {
    const state = await fold([
      started(0, 'r'),
      segment(1, 'r', 'm1'),
      delta(2, 'r', 'm1', 'one'),
      segment(3, 'r', 'm2'),
      delta(4, 'r', 'm2', 'two'),
    ]);
    expect(state.overlay).toEqual({ requestId: 'r', messageId: 'm2', text: 'two' });
  });

  it.each([
    ['chat.done', {}, 'done'],
    ['chat.error', { error: { message: 'boom' } }, 'error'],
    ['chat.cancelled', { reason: 'server_startup_recovery' }, 'cancelled'],
  ])('finishes a run at %s: no active run, no overlay (spec §6.3)', async (type, extra, status) => {
    const state = await fold([started(0, 'r'), segment(1, 'r', 'm1'), ev(2, type, { request_id: 'r', ...extra })]);
    expect(state.activeRun).toBeNull();
    expect(state.overlay).toBeNull();
    expect(state.runs).toEqual([
      { requestId: 'r', status, startedSeq: 0, lastSeq: 2, finishedSeq: 2, delivered: false },
    ]);
  });

  it('reports an earlier unfinished run as abandoned_run; the last chat.started is the active run (TJ-REPLAY-010)', async () => {
    const state = await fold([started(0, 'r1'), segment(1, 'r1', 'm1'), started(2, 'r2'), delta(3, 'r1', 'm1', 'x')]);
    expect(state.runs.map((r) => [r.requestId, r.status])).toEqual([
      ['r1', 'abandoned'],
      ['r2', 'running'],
    ]);
    expect(state.activeRun?.requestId).toBe('r2');
    expect(state.overlay).toBeNull();
    expect(codes(state)).toEqual(['abandoned_run@1']);
    expect(state.findings[0]).toMatchObject({ severity: 'warn', repairable: true });
  });

  it('does not abandon a run whose finishing record comes late, and has no active run once the last run finished', async () => {
    const state = await fold([started(0, 'r1'), started(1, 'r2'), ev(2, 'chat.done', { request_id: 'r1' })]);
    expect(state.runs.map((r) => r.status)).toEqual(['done', 'running']);
    expect(state.findings).toEqual([]);
  });

  it('starts no second run for a repeated chat.started, and takes the first finishing record (documented choices)', async () => {
    const state = await fold([
      started(0, 'r'),
      ev(1, 'chat.cancelled', { request_id: 'r' }),
      started(2, 'r'),
      ev(3, 'chat.done', { request_id: 'r' }),
    ]);
    expect(state.runs).toEqual([
      { requestId: 'r', status: 'cancelled', startedSeq: 0, lastSeq: 3, finishedSeq: 1, delivered: false },
    ]);
    expect(state.activeRun).toBeNull();
  });

  it('gives a log without records an empty snapshot with a null last seq (spec §15.3)', async () => {
    expect(eventLogSnapshot(await fold([]))).toEqual({
      messages: [],
      activeRun: null,
      overlay: null,
      lastSeq: null,
      epoch: null,
    });
  });
});

describe('EventLogFold: delivery (spec §15.5)', () => {
  it('lists finished runs without a delivery.ack as undelivered, never a running one (TJ-REPLAY-015)', async () => {
    const state = await fold([
      ev(0, 'chat.started', { request_id: 'a' }),
      ev(1, 'chat.done', { request_id: 'a' }),
      ev(2, 'chat.started', { request_id: 'b' }),
      ev(3, 'chat.error', { request_id: 'b', error: { message: 'x' } }),
      ev(4, 'delivery.ack', { request_id: 'b', through_seq: 3 }),
      ev(5, 'chat.started', { request_id: 'c' }),
    ]);
    expect(state.undelivered.map((r) => r.requestId)).toEqual(['a']);
    expect(state.runs.map((r) => [r.requestId, r.delivered])).toEqual([
      ['a', false],
      ['b', true],
      ['c', false],
    ]);
  });

  it('ignores a delivery.ack for a request_id that has no run (TJ-REPLAY-017)', async () => {
    const state = await fold([
      ev(0, 'delivery.ack', { request_id: 'ghost' }),
      ev(1, 'chat.started', { request_id: 'a' }),
      ev(2, 'chat.done', { request_id: 'a' }),
    ]);
    expect(state.runs.map((r) => r.requestId)).toEqual(['a']);
    expect(state.undelivered.map((r) => r.requestId)).toEqual(['a']);
    expect(state.findings).toEqual([]);
  });
});
