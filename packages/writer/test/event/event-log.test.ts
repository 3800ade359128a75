import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore, recoverEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/event/deep-freeze.js';
import { type EventLog, eventLogPath, openEventLog, WriterError } from '../support/internals.js';
import { tempDir } from '../support/temp.js';
import { readerViews, recordsOf, seqsOf, seriousFindings, steppingClock } from './support.js';

const sys = { role: 'system', content: 'You are a coding agent.' };
const user = { role: 'user', content: 'Fix the failing test.' };

/** One of everything the writer can append, as a finished, delivered run plus an active run with an open segment. */
async function writeEverything(log: EventLog): Promise<void> {
  await log.appendMessage(sys);
  await log.chatStarted({ requestId: 'req-1', model: 'gpt-5', content: user.content });
  await log.appendMessage(user);
  await log.toolStart({ requestId: 'req-1', toolCallId: 'call_1', tool: 'shell', args: { cmd: 'pnpm test' } });
  await log.toolResult({ requestId: 'req-1', toolCallId: 'call_1', output: '1 failed', isError: false });
  await log.toolEnd({ requestId: 'req-1', toolCallId: 'call_1' });
  await log.appendMessage({ role: 'tool', content: '1 failed', tool_call_id: 'call_1' });
  await log.segmentStarted({ requestId: 'req-1', messageId: 'msg-31' });
  await log.delta({ requestId: 'req-1', messageId: 'msg-31', text: 'The test expects ' });
  await log.delta({ requestId: 'req-1', messageId: 'msg-31', text: 'UTC dates.' });
  await log.appendMessage({ role: 'assistant', content: 'The test expects UTC dates.', id: 'msg-31' });
  await log.chatDone({ requestId: 'req-1' });
  await log.ack('req-1', { clientId: 'pwa-1', throughSeq: 11 });
  await log.editMessage(0, { role: 'system', content: 'Be brief.' });
  await log.undo();
  await log.checkpoint();
  await log.append('x.acme.note', { text: 'private extension' });
  await log.chatStarted({ requestId: 'req-2' });
  await log.chatError({ requestId: 'req-2', error: { message: 'rate limited', code: '429' } });
  await log.chatStarted({ requestId: 'req-3', model: null });
  await log.chatCancelled({ requestId: 'req-3', reason: 'user' });
  await log.replaceMessages([sys, user]);
  await log.undo(2);
  await log.appendMessage({ role: 'user', content: 'again \u2028 with a line separator' });
  await log.chatStarted({ requestId: 'req-4' });
  await log.segmentStarted({ requestId: 'req-4', messageId: 'msg-40' });
  await log.delta({ requestId: 'req-4', messageId: 'msg-40', text: 'partial ' });
  await log.delta({ requestId: 'req-4', messageId: 'msg-40', text: 'answer' });
}

describe('openEventLog: appends (spec §6, §11)', () => {
  it('writes every record type so that check finds nothing and every reader derives the writer state (TJ-EVENT-003, TJ-REPLAY-001, TJ-REPLAY-007)', async () => {
    const root = tempDir();
    const log = await openEventLog({ root, sessionId: 'conv-1', clock: steppingClock() });
    expect(log.path).toBe(join(root, 'conv-1', 'events.jsonl'));
    expect(log.durability).toBe('every');
    expect(log.opened.created).toBe(true);
    expect(log.lastSeq).toBeNull();
    await writeEverything(log);
    const mine = log.snapshot();
    await log.close();

    expect(seqsOf(log.path)).toEqual([...Array((mine.lastSeq as number) + 1).keys()]);
    const { full, recovered, replay, check } = await readerViews(log.path);
    expect(check.findings).toEqual([]);
    expect(check.eventLogs).toMatchObject([
      { sessionId: 'conv-1', activeRequestId: 'req-4', undelivered: ['req-2', 'req-3'] },
    ]);
    expect(mine.messages).toEqual([{ role: 'user', content: 'again \u2028 with a line separator' }]);
    expect(mine.activeRun).toMatchObject({ requestId: 'req-4', status: 'running' });
    expect(mine.overlay).toEqual({ requestId: 'req-4', messageId: 'msg-40', text: 'partial answer' });
    for (const derived of [full, recovered]) {
      expect(derived.messages).toEqual(mine.messages);
      expect(derived.lastSeq).toBe(mine.lastSeq);
      expect(derived.activeRun).toEqual(mine.activeRun);
      expect(derived.overlay).toEqual(mine.overlay);
    }
    expect(replay.kind === 'records' && replay.records.length).toBe((mine.lastSeq as number) + 1);
    // The raw line escapes U+2028 (TJ-FRAME-007) and ts is RFC 3339 UTC (TJ-FAM-021).
    expect(readFileSync(log.path, 'utf8')).toContain('\\u2028');
    for (const record of recordsOf(log.path)) expect(record.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('resolves each append with its seq, offset and length after it is durable, in call order when calls overlap (TJ-DUR-006)', async () => {
    const dir = tempDir();
    for (const durability of ['every', 'group', 'none'] as const) {
      const log = await openEventLog({ file: join(dir, durability, 'events.jsonl'), durability });
      expect(log.durability).toBe(durability);
      const acks = await Promise.all(
        Array.from({ length: 20 }, (_, i) => log.appendMessage({ role: 'user', content: `m${i}` })),
      );
      expect(acks.map((ack) => ack.seq)).toEqual([...Array(20).keys()]);
      for (let i = 1; i < acks.length; i++) {
        const previous = acks[i - 1] as { cursor: number; length: number };
        expect(acks[i]?.cursor).toBe(previous.cursor + previous.length);
      }
      await log.close();
      expect(recordsOf(log.path).map((r) => (r.payload as { message: { content: string } }).message.content)).toEqual(
        Array.from({ length: 20 }, (_, i) => `m${i}`),
      );
      const bytes = readFileSync(log.path);
      const last = acks[19] as { cursor: number; length: number };
      expect(last.cursor + last.length).toBe(bytes.length);
    }
  });

  it('refuses what a reader would report: out-of-range edits, undo beyond the list, runs out of order (TJ-EVENT-009, TJ-EVENT-010, TJ-EVENT-012, TJ-REPLAY-002)', async () => {
    const log = await openEventLog({ file: join(tempDir(), 'events.jsonl') });
    await log.appendMessage(user);
    const refused = [
      log.editMessage(1, sys),
      log.undo(2),
      log.chatDone({ requestId: 'none-active' }),
      log.delta({ requestId: 'r', messageId: 'm', text: 'x' }),
    ];
    for (const attempt of refused) await expect(attempt).rejects.toMatchObject({ code: 'illegal_transition' });
    await log.chatStarted({ requestId: 'r1' });
    await expect(log.chatStarted({ requestId: 'r2' })).rejects.toMatchObject({ code: 'illegal_transition' });
    await expect(log.ack('r1')).rejects.toMatchObject({ code: 'illegal_transition' });
    await expect(log.toolStart({ requestId: 'other', toolCallId: 'c', tool: 't' })).rejects.toMatchObject({
      code: 'illegal_transition',
    });
    await expect(log.delta({ requestId: 'r1', messageId: 'm', text: 'no segment' })).rejects.toMatchObject({
      code: 'illegal_transition',
    });
    await log.segmentStarted({ requestId: 'r1', messageId: 'm1' });
    await expect(log.delta({ requestId: 'r1', messageId: 'm2', text: 'wrong segment' })).rejects.toMatchObject({
      code: 'illegal_transition',
    });
    await log.chatDone({ requestId: 'r1' });
    await expect(log.chatStarted({ requestId: 'r1' })).rejects.toMatchObject({ code: 'illegal_transition' });
    await log.ack('r1');
    await log.close();
    expect(recordsOf(log.path).map((r) => r.type)).toEqual([
      'message_append',
      'chat.started',
      'assistant.segment.started',
      'chat.done',
      'delivery.ack',
    ]);
    expect(seqsOf(log.path)).toEqual([0, 1, 2, 3, 4]);
    expect(seriousFindings(await checkStore([log.path]))).toEqual([]);
  });

  it('refuses a delivery.ack whose through_seq is not below its own seq, writing nothing (TJ-EVENT-021)', async () => {
    const log = await openEventLog({ file: join(tempDir(), 'events.jsonl') });
    await log.chatStarted({ requestId: 'r1' });
    await log.chatDone({ requestId: 'r1' });
    // The ack would get seq 2: a client can have received at most seq 1, the finishing record.
    for (const throughSeq of [2, 3, 1_000_000]) {
      await expect(log.ack('r1', { throughSeq }), String(throughSeq)).rejects.toMatchObject({
        code: 'illegal_transition',
        message: expect.stringContaining(`through_seq ${throughSeq}`),
      });
      await expect(log.append('delivery.ack', { request_id: 'r1', through_seq: throughSeq })).rejects.toMatchObject({
        code: 'illegal_transition',
      });
    }
    expect(log.lastSeq).toBe(1);
    await log.ack('r1', { throughSeq: 1 });
    await log.close();
    expect(recordsOf(log.path).map((r) => [r.seq, r.type])).toEqual([
      [0, 'chat.started'],
      [1, 'chat.done'],
      [2, 'delivery.ack'],
    ]);
  });

  it('validates records against the v1 schema before writing, and writes nothing for a bad one (TJ-EVENT-002, TJ-EVENT-008)', async () => {
    const log = await openEventLog({ file: join(tempDir(), 'events.jsonl'), maxLineBytes: 4096 });
    const bad: Promise<unknown>[] = [
      log.appendMessage({ content: 'no role' } as never),
      log.appendMessage({ role: 7 } as never),
      log.chatStarted({ requestId: '' }),
      log.chatStarted(null as never),
      log.append('chat.started', {}),
      log.append('run.start', { run_id: 'r' }),
      log.append('checkpoint', { messages: [] }),
      log.append('', {}),
      log.append('x.acme.thing', [] as never),
      log.appendMessage({ role: 'user', content: 10n } as never),
    ];
    for (const attempt of bad) await expect(attempt).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(log.appendMessage({ role: 'user', content: 'x'.repeat(5000) })).rejects.toMatchObject({
      code: 'line_too_long',
    });
    const ack = await log.appendMessage({ role: 'user', content: 'ok', dropped: undefined } as never);
    expect(ack.seq).toBe(0);
    // A future type is written in the envelope (readers report it as unknown_record, info).
    expect((await log.append('future.type', { a: 1 })).seq).toBe(1);
    await log.close();
    expect(recordsOf(log.path)).toMatchObject([
      { seq: 0, type: 'message_append', payload: { message: { role: 'user', content: 'ok' } } },
      { seq: 1, type: 'future.type', payload: { a: 1 } },
    ]);
    const check = await checkStore([log.path]);
    expect(check.findings.map((f) => [f.code, f.severity])).toEqual([['unknown_record', 'info']]);
  });

  it('validates the session id before building a path and checks its options (TJ-FAM-010)', async () => {
    const root = tempDir();
    for (const sessionId of ['../escape', 'a/b', '', '.', '..', 'x'.repeat(129)]) {
      await expect(openEventLog({ root, sessionId })).rejects.toMatchObject({ code: 'invalid_identifier' });
      expect(() => eventLogPath(root, sessionId)).toThrow(expect.objectContaining({ code: 'invalid_identifier' }));
    }
    expect(readdirSync(root)).toEqual([]);
    const file = join(root, 'events.jsonl');
    await expect(openEventLog({ file, durability: 'sometimes' as never })).rejects.toMatchObject({
      code: 'invalid_option',
    });
    await expect(openEventLog({ file, checkpointInterval: 0 })).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(openEventLog({ file, root, sessionId: 's' } as never)).rejects.toMatchObject({
      code: 'invalid_option',
    });
    expect(existsSync(file)).toBe(false);
  });

  it('holds the file lock: a second writer is refused while the first is open (TJ-DUR-017, TJ-DUR-018)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file });
    await expect(openEventLog({ file })).rejects.toMatchObject({ code: 'journal_locked' });
    await log.close();
    await expect(log.appendMessage(user)).rejects.toMatchObject({ code: 'writer_closed' });
    const again = await openEventLog({ file });
    await again.close();
  });
});

describe('checkpoints and reopening (spec §6.2, §15.2)', () => {
  it('appends a checkpoint after every N records, equal to the fold before it (TJ-EVENT-006, TJ-EVENT-007)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, checkpointInterval: 5 });
    for (let i = 0; i < 12; i++) await log.appendMessage({ role: 'user', content: `m${i}` });
    await log.undo();
    await log.close();
    const records = recordsOf(file);
    expect(records.map((r) => r.type)).toEqual([
      ...Array(5).fill('message_append'),
      'checkpoint',
      ...Array(5).fill('message_append'),
      'checkpoint',
      'message_append',
      'message_append',
      'undo',
    ]);
    expect(records[5]?.payload).toEqual({
      messages: Array.from({ length: 5 }, (_, i) => ({ role: 'user', content: `m${i}` })),
      // The run index (TJ-EVENT-019): no run started yet.
      runs: [],
    });
    expect((records[11]?.payload as { messages: unknown[] } | undefined)?.messages).toHaveLength(10);
    expect(seqsOf(file)).toEqual([...Array(15).keys()]);
    const recovered = await recoverEventLog(file);
    expect(recovered.checkpointOffset).not.toBeNull();
    expect(recovered.messages).toHaveLength(11);
    expect(seriousFindings(await checkStore([file]))).toEqual([]);
  });

  it('spaces checkpoints by records and by bytes, across a reopen, so a long log stays linear (TJ-EVENT-006)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const interval = 10;
    const message = (i: number) => ({
      role: 'tool',
      content: `result ${i}: ${'y'.repeat(200)}`,
      tool_call_id: `c${i}`,
    });
    let log = await openEventLog({ file, checkpointInterval: interval });
    for (let i = 0; i < 250; i++) await log.appendMessage(message(i));
    // A new writer continues from what the file says: the last checkpoint's length and the bytes after it.
    await log.close();
    log = await openEventLog({ file, checkpointInterval: interval });
    for (let i = 250; i < 500; i++) await log.appendMessage(message(i));
    await log.close();

    // Where the rule puts checkpoints, worked out from the file's own lines: right after the record that brings the
    // count since the last checkpoint to the interval and its bytes to that checkpoint's line length.
    const lines = readFileSync(file).toString('utf8').split('\n').slice(0, -1);
    let since = 0;
    let sinceBytes = 0;
    let lastCheckpoint = 0;
    let checkpointBytes = 0;
    let recordBytes = 0;
    const expected: boolean[] = [];
    for (const line of lines) {
      const bytes = Buffer.byteLength(line) + 1;
      if ((JSON.parse(line) as { type: string }).type === 'checkpoint') {
        checkpointBytes += bytes;
        lastCheckpoint = bytes;
        since = 0;
        sinceBytes = 0;
        continue;
      }
      recordBytes += bytes;
      since += 1;
      sinceBytes += bytes;
      expected.push(since >= interval && sinceBytes >= lastCheckpoint);
    }
    const actual = lines
      .map((line, i) => ({ line, next: lines[i + 1] }))
      .filter(({ line }) => (JSON.parse(line) as { type: string }).type !== 'checkpoint')
      .map(({ next }) => next !== undefined && (JSON.parse(next) as { type: string }).type === 'checkpoint');
    // The last record's checkpoint, when due, is the one line that may be missing: nothing follows it to compare.
    expect(actual.slice(0, -1)).toEqual(expected.slice(0, -1));
    // A checkpoint every `interval` records alone would write about 500² / (2 × 10) message copies: 25 × the records.
    expect(checkpointBytes).toBeLessThanOrEqual(2 * recordBytes);
    expect(expected.filter(Boolean).length).toBeGreaterThan(3);
    expect(seriousFindings(await checkStore([file]))).toEqual([]);
  });

  it('continues the seq after reopening, from a checkpoint with records after it, reading only the tail (TJ-EVENT-004)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    let log = await openEventLog({ file, checkpointInterval: 10 });
    for (let i = 0; i < 25; i++) await log.appendMessage({ role: 'user', content: `m${i}` });
    await log.chatStarted({ requestId: 'live' });
    await log.segmentStarted({ requestId: 'live', messageId: 'a1' });
    await log.delta({ requestId: 'live', messageId: 'a1', text: 'hel' });
    const before = log.snapshot();
    await log.close();

    log = await openEventLog({ file, checkpointInterval: 10 });
    expect(log.recovery.checkpointOffset).toBeGreaterThan(0);
    expect(log.recovery.startOffset).toBeGreaterThan(0);
    expect(log.snapshot()).toEqual(before);
    await log.delta({ requestId: 'live', messageId: 'a1', text: 'lo' });
    expect(log.snapshot().overlay?.text).toBe('hello');
    const ack = await log.appendMessage({ role: 'assistant', content: 'hello', id: 'a1' });
    expect(ack.seq).toBe((before.lastSeq as number) + 2);
    await log.chatDone({ requestId: 'live' });
    await log.close();
    expect(seqsOf(file)).toEqual([...Array(seqsOf(file).length).keys()]);
    const { full } = await readerViews(file);
    expect(full.messages).toHaveLength(26);
    expect(full.findings).toEqual([]);
  });

  it('continues after a torn tail that reopening repairs, with the torn bytes moved aside (TJ-DUR-004, TJ-DUR-005)', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.jsonl');
    let log = await openEventLog({ file, checkpointInterval: 4 });
    for (let i = 0; i < 6; i++) await log.appendMessage({ role: 'user', content: `m${i}` });
    const lastSeq = log.lastSeq as number;
    await log.close();
    const size = readFileSync(file).length;
    appendFileSync(file, '{"seq":7,"ts":"2026-01-01T00:00:00Z","type":"message_app');

    log = await openEventLog({ file, checkpointInterval: 4 });
    expect(log.opened.tornTail).toMatchObject({ quarantine: join(dir, `events.jsonl.${size}.torn`) });
    expect(readdirSync(dir)).toContain(`events.jsonl.${size}.torn`);
    expect(log.lastSeq).toBe(lastSeq);
    expect((await log.appendMessage({ role: 'user', content: 'after repair' })).seq).toBe(lastSeq + 1);
    await log.close();
    expect(seqsOf(file)).toEqual([...Array(lastSeq + 2).keys()]);
    expect(seriousFindings(await checkStore([file]))).toEqual([]);
  });

  it('starts at seq 0 in a new or empty file and after a file of damage only (TJ-EVENT-003)', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.jsonl');
    writeFileSync(file, '');
    let log = await openEventLog({ file });
    expect(log.opened.created).toBe(false);
    expect((await log.appendMessage(user)).seq).toBe(0);
    await log.close();
    const damaged = join(dir, 'damaged.jsonl');
    writeFileSync(damaged, 'not json\n{"type":"message_append"}\n');
    log = await openEventLog({ file: damaged });
    expect(log.findings.map((f) => f.code)).toContain('malformed_line');
    expect((await log.appendMessage(user)).seq).toBe(0);
    await log.close();
  });

  it('closes the unfinished run of a gone writer with chat.cancelled server_startup_recovery (TJ-RECOV-011)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    let log = await openEventLog({ file });
    await log.chatStarted({ requestId: 'old' });
    await log.segmentStarted({ requestId: 'old', messageId: 'm' });
    await log.close();
    log = await openEventLog({ file });
    expect(log.snapshot().activeRun?.requestId).toBe('old');
    expect(await log.cancelUnfinishedRuns()).toEqual([{ requestId: 'old', seq: 2 }]);
    expect(log.snapshot().activeRun).toBeNull();
    expect(await log.cancelUnfinishedRuns()).toEqual([]);
    await log.close();
    expect(recordsOf(file).at(-1)).toMatchObject({
      type: 'chat.cancelled',
      payload: { request_id: 'old', reason: 'server_startup_recovery' },
    });
    const check = await checkStore([file]);
    expect(check.eventLogs[0]?.activeRequestId).toBeNull();
    expect(seriousFindings(check)).toEqual([]);
  });

  it('closes an abandoned run found in the tail too, which repairs abandoned_run (TJ-RECOV-011, TJ-REPLAY-010)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const line = (seq: number, type: string, payload: object) =>
      `${JSON.stringify({ seq, ts: '2026-01-01T00:00:00Z', type, payload })}\n`;
    writeFileSync(
      file,
      line(0, 'chat.started', { request_id: 'a' }) +
        line(1, 'chat.started', { request_id: 'b' }) +
        line(2, 'chat.delta', { request_id: 'b', message_id: 'm', text: 'x' }),
    );
    expect((await checkStore([file])).findings.map((f) => f.code)).toEqual(['abandoned_run']);
    const log = await openEventLog({ file });
    expect((await log.cancelUnfinishedRuns()).map((r) => r.requestId)).toEqual(['a', 'b']);
    await log.close();
    expect((await checkStore([file])).findings).toEqual([]);
  });

  it('applies its messages after a tail whose checkpoint the seq checks excluded (TJ-EVENT-007, TJ-EVENT-014)', async () => {
    // Another producer's log: the last chat.started lies before the last checkpoint, so recovery folds from it with
    // the list unknown until the checkpoint, and the checkpoint's seq is a regression the fold excludes.
    const file = join(tempDir(), 'events.jsonl');
    const line = (seq: number, type: string, payload: object) =>
      `${JSON.stringify({ seq, ts: '2026-01-01T00:00:00Z', type, payload })}\n`;
    writeFileSync(
      file,
      line(0, 'chat.started', { request_id: 'r' }) +
        line(5, 'message_append', { message: user }) +
        line(3, 'checkpoint', { messages: [user] }),
    );
    const log = await openEventLog({ file, checkpointInterval: 2 });
    expect(log.recovery.startOffset).toBe(0);
    await log.appendMessage({ role: 'assistant', content: 'a' });
    await log.appendMessage({ role: 'assistant', content: 'b' });
    expect(log.snapshot().messages).toEqual([
      { role: 'assistant', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]);
    await log.idle();
    expect(recordsOf(file).at(-1)).toMatchObject({
      type: 'checkpoint',
      payload: { messages: log.snapshot().messages },
    });
    await log.close();
  });
});

describe('deeply nested messages (issue 11, defect 0)', () => {
  function nested(depth: number): unknown {
    let content: unknown = 'leaf';
    for (let level = 0; level < depth; level += 1) content = [content];
    return content;
  }

  it('deepFreeze walks 10,000 levels without recursion', () => {
    const value = nested(10_000);
    expect(deepFreeze(value)).toBe(value);
    let inner = value;
    let depth = 0;
    while (Array.isArray(inner)) {
      expect(Object.isFrozen(inner)).toBe(true);
      inner = inner[0];
      depth += 1;
    }
    expect(depth).toBe(10_000);
  });

  it('appends, freezes in depth and reopens a valid 2,000-deep message', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, checkpointInterval: 2 });
    expect((await log.appendMessage({ role: 'user', content: nested(2_000) })).seq).toBe(0);
    await log.appendMessage({ role: 'user', content: 'next' });
    expect(Object.isFrozen(log.snapshot().messages[0]?.content)).toBe(true);
    await log.close();
    const reopened = await openEventLog({ file });
    expect(reopened.snapshot().messages).toHaveLength(2);
    await reopened.close();
  });

  it('answers a 10,000-deep message with a writer error, never a bare RangeError, and goes on', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file });
    const outcome = await log.appendMessage({ role: 'user', content: nested(10_000) }).then(
      (ack) => ack,
      (error: unknown) => error,
    );
    if (outcome instanceof Error) {
      expect(outcome).toBeInstanceOf(WriterError);
      expect(outcome).toMatchObject({ code: 'invalid_record', file });
      expect(log.lastSeq).toBeNull();
    } else expect(outcome).toMatchObject({ seq: 0 });
    const next = (log.lastSeq ?? -1) + 1;
    expect((await log.appendMessage({ role: 'user', content: 'after' })).seq).toBe(next);
    await log.close();
  });
});
