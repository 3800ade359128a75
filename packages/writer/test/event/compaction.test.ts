import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore, replayEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { compactEventLog, type EventLog, nodeFileSystem, openEventLog } from '../support/internals.js';
import { readLinesOf } from '../support/space.js';
import { tempDir } from '../support/temp.js';
import { fullFold, recordsOf, seqsOf, steppingClock } from './support.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const LATER = Date.parse('2026-03-01T00:00:00.000Z');
const DAY = 24 * 3600 * 1000;
const HOUR = 3600 * 1000;

/** A finished, delivered run with its messages, then a checkpoint: everything before the checkpoint may go. */
async function deliveredRun(log: EventLog, id: string): Promise<void> {
  await log.chatStarted({ requestId: id, content: `q-${id}` });
  await log.appendMessage({ role: 'user', content: `q-${id}` });
  await log.segmentStarted({ requestId: id, messageId: `a-${id}` });
  await log.delta({ requestId: id, messageId: `a-${id}`, text: 'answer' });
  await log.appendMessage({ role: 'assistant', content: 'answer', id: `a-${id}` });
  await log.chatDone({ requestId: id });
  await log.ack(id, { clientId: 'c1' });
}

/** Byte offset of the line holding the record with `seq`. */
function offsetOfSeq(file: string, seq: number): number {
  const bytes = readFileSync(file);
  let offset = 0;
  for (const line of bytes.toString('latin1').split('\n')) {
    if (line.startsWith(`{"seq":${seq},`)) return offset;
    offset += line.length + 1;
  }
  throw new Error(`no seq ${seq}`);
}

function line(seq: number, type: string, payload: object, ts = '2026-01-01T00:00:00Z'): string {
  return `${JSON.stringify({ seq, ts, type, payload })}\n`;
}

describe('compactEventLog (spec §14.2)', () => {
  it('keeps the last eligible checkpoint and every byte after it, unknown types and fields included (TJ-RET-012, TJ-RET-014)', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.jsonl');
    let log = await openEventLog({ file, clock: steppingClock(T0), checkpointInterval: 1000 });
    await log.appendMessage({ role: 'system', content: 'sys' });
    await deliveredRun(log, 'r1');
    await log.checkpoint();
    await deliveredRun(log, 'r2');
    const c = await log.checkpoint();
    await log.append('x.acme.note', { keep: 'me' });
    await log.close();
    // Records a newer writer produced: an unknown type and an unknown top-level member, plus mid-file damage.
    appendFileSync(
      file,
      `{"seq":${c.seq + 2},"ts":"2026-01-01T00:10:00Z","type":"future.kind","payload":{"z":[1,2]},"extra":{"é":true}}\n` +
        '{"damaged\n',
    );
    log = await openEventLog({ file, clock: steppingClock(T0 + 3600_000) });
    await log.appendMessage({ role: 'user', content: 'tail' });
    await log.close();
    const original = readFileSync(file);
    const cOffset = offsetOfSeq(file, c.seq);
    const before = await fullFold(file);

    const report = await compactEventLog(file, { now: LATER });
    expect(report).toMatchObject({
      compacted: true,
      checkpointSeq: c.seq,
      firstRetainedSeq: c.seq,
      removedBytes: cOffset,
      removedRecords: c.seq,
      removedDamagedLines: 0,
    });
    expect(Buffer.compare(readFileSync(file), original.subarray(cOffset))).toBe(0);
    const after = await fullFold(file);
    expect(after.messages).toEqual(before.messages);
    expect(after.lastSeq).toBe(before.lastSeq);
    expect(after.firstSeq).toBe(c.seq);
    // A client that holds less than the compacted prefix gets a snapshot (TJ-REPLAY-013); one past it gets records.
    const stale = await replayEventLog(file, { after: 3 });
    expect(stale.kind === 'snapshot' && stale.reason).toBe('compacted');
    const fresh = await replayEventLog(file, { after: c.seq });
    expect(fresh.kind === 'records' && fresh.records.map((r) => r.value.type)).toEqual([
      'x.acme.note',
      'future.kind',
      'message_append',
    ]);
    // The damaged line after C is kept as it was, and still reported; nothing else is.
    const check = await checkStore([file]);
    expect(check.findings.map((f) => f.code).sort()).toEqual(['malformed_line', 'unknown_record']);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // The writer goes on from the compacted file; compacting again finds nothing before the leading checkpoint.
    log = await openEventLog({ file });
    expect((await log.appendMessage({ role: 'user', content: 'more' })).seq).toBe((before.lastSeq as number) + 1);
    expect(await log.compact({ now: LATER })).toMatchObject({ compacted: false, reason: 'nothing_before_checkpoint' });
    await log.close();
  });

  it('removes damaged lines before C with the prefix and repairs a torn tail first (TJ-RET-012, TJ-DUR-005)', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.jsonl');
    writeFileSync(
      file,
      `${line(0, 'message_append', { message: { role: 'user', content: 'a' } })}garbage line\n\u0000\u0000\u0000\n${line(1, 'checkpoint', { messages: [{ role: 'user', content: 'a' }] })}not json either\n${line(2, 'message_append', { message: { role: 'user', content: 'b' } })}{"seq":3,"ts":"torn`,
    );
    const withoutTorn = readFileSync(file).toString('latin1');
    const cOffset = withoutTorn.indexOf('{"seq":1,');
    const keep = withoutTorn.slice(cOffset, withoutTorn.lastIndexOf('\n') + 1);
    const report = await compactEventLog(file, { now: LATER });
    expect(report).toMatchObject({ compacted: true, removedRecords: 1, removedDamagedLines: 2, checkpointSeq: 1 });
    expect(readFileSync(file).toString('latin1')).toBe(keep);
    expect(readdirSync(dir).some((name) => name.endsWith('.torn'))).toBe(true);
  });

  it('never removes a record of an unfinished run, or of a finished run no client acknowledged (TJ-RET-013)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, clock: steppingClock(T0) });
    await deliveredRun(log, 'done');
    const early = await log.checkpoint();
    await log.chatStarted({ requestId: 'slow' });
    await log.segmentStarted({ requestId: 'slow', messageId: 'm' });
    await log.checkpoint();
    const original = readLinesOf(file);
    const earlyOffset = offsetOfSeq(file, early.seq);

    let report = await log.compact({ now: LATER });
    // The first checkpoint precedes the run: it may lead; the later one may not.
    expect(report).toMatchObject({ compacted: true, checkpointSeq: early.seq, blockedBy: { requestId: 'slow' } });
    expect(Buffer.compare(readFileSync(file), original.subarray(earlyOffset))).toBe(0);
    report = await log.compact({ now: LATER });
    expect(report).toMatchObject({ compacted: false, reason: 'unfinished_run', blockedBy: { requestId: 'slow' } });

    await log.chatDone({ requestId: 'slow' });
    await log.checkpoint();
    const unacked = readFileSync(file);
    // Within the delivery window (TJ-RET-018 is tested below): the finished, unacknowledged run still blocks.
    report = await log.compact({ now: LATER, deliveryWindowSeconds: 90 * 86400 });
    expect(report).toMatchObject({
      compacted: false,
      reason: 'undelivered_run',
      blockedBy: { requestId: 'slow', seq: early.seq + 1 },
    });
    expect(Buffer.compare(readFileSync(file), unacked)).toBe(0);

    await log.ack('slow');
    const last = await log.checkpoint();
    report = await log.compact({ now: LATER });
    expect(report).toMatchObject({ compacted: true, checkpointSeq: last.seq, firstRetainedSeq: last.seq });
    expect(log.snapshot().lastSeq).toBe(last.seq);
    await log.close();
    expect(seqsOf(file)).toEqual([last.seq]);
    expect((await fullFold(file)).messages).toEqual(log.snapshot().messages);
  });

  it('reports an unfinished run that blocks every checkpoint as unfinished_run (TJ-RET-013)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, clock: steppingClock(T0) });
    await log.chatStarted({ requestId: 'open' });
    await log.appendMessage({ role: 'user', content: 'q' });
    await log.checkpoint();
    await log.appendMessage({ role: 'user', content: 'q2' });
    await log.checkpoint();
    expect(await log.compact({ now: LATER })).toMatchObject({
      compacted: false,
      reason: 'unfinished_run',
      checkpointSeq: null,
      firstRetainedSeq: 0,
      blockedBy: { requestId: 'open', seq: 0 },
    });
    await log.close();
  });

  it('never removes a record younger than the retention window, nor one whose ts does not parse (TJ-RET-001, TJ-RET-013)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, clock: steppingClock(T0) });
    await log.appendMessage({ role: 'user', content: 'old' });
    await log.checkpoint();
    await log.appendMessage({ role: 'user', content: 'newer' });
    const c = await log.checkpoint();
    // Default window is 48 h: one day later everything is young.
    expect(await log.compact({ now: T0 + DAY })).toMatchObject({ compacted: false, reason: 'retention' });
    expect(await log.compact({ now: T0 + DAY, retentionSeconds: 0 })).toMatchObject({
      compacted: true,
      checkpointSeq: c.seq,
    });
    await expect(log.compact({ retentionSeconds: -1 })).rejects.toMatchObject({ code: 'invalid_option' });
    await log.close();

    const odd = join(tempDir(), 'events.jsonl');
    writeFileSync(
      odd,
      line(0, 'message_append', { message: { role: 'user', content: 'a' } }, 'yesterday') +
        line(1, 'checkpoint', { messages: [{ role: 'user', content: 'a' }] }),
    );
    const original = readFileSync(odd);
    expect(await compactEventLog(odd, { now: LATER })).toMatchObject({
      compacted: false,
      reason: 'retention',
      blockedBy: { seq: 0 },
    });
    expect(Buffer.compare(readFileSync(odd), original)).toBe(0);
  });

  it('reports a log without a checkpoint and refuses a missing file (TJ-RET-012)', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.jsonl');
    writeFileSync(file, line(0, 'message_append', { message: { role: 'user', content: 'a' } }));
    expect(await compactEventLog(file, { now: LATER })).toMatchObject({
      compacted: false,
      reason: 'no_checkpoint',
      firstRetainedSeq: 0,
    });
    await expect(compactEventLog(join(dir, 'missing.jsonl'))).rejects.toMatchObject({ code: 'invalid_option' });
    // Beside the log only the flock file of foreign writers, created for them and never removed (TJ-DUR-050).
    expect(readdirSync(dir).sort()).toEqual(['.events.jsonl.lock', 'events.jsonl']);
  });

  it('replaces the file atomically and removes a stale temporary file of an earlier crash (TJ-DUR-009, TJ-DUR-010)', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.jsonl');
    const log = await openEventLog({ file, clock: steppingClock(T0) });
    await deliveredRun(log, 'r');
    await log.checkpoint();
    await log.close();
    writeFileSync(join(dir, '.events.jsonl.0123456789ab.tmp'), 'left by a crash');
    const fs = faultyFileSystem(nodeFileSystem);
    let during: string[] = [];
    fs.before = (op) => {
      if (op === 'rename') during = readdirSync(dir);
    };
    expect((await compactEventLog(file, { now: LATER, fs })).compacted).toBe(true);
    // The stale temporary is gone before the new one is written; the new one exists only until the rename.
    expect(during.filter((name) => name.endsWith('.tmp'))).toHaveLength(1);
    expect(during).not.toContain('.events.jsonl.0123456789ab.tmp');
    expect(readdirSync(dir).sort()).toEqual(['.events.jsonl.lock', 'events.jsonl']);
  });

  it('holds the writer lock: refused while a writer is open, and a writer is refused while it compacts (TJ-DUR-017, TJ-DUR-018)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, clock: steppingClock(T0) });
    await deliveredRun(log, 'r');
    await log.checkpoint();
    await expect(compactEventLog(file, { now: LATER })).rejects.toMatchObject({ code: 'journal_locked' });
    await log.close();

    const fs = faultyFileSystem(nodeFileSystem);
    let refused: unknown;
    fs.before = async (op) => {
      if (op !== 'rename') return;
      refused = await openEventLog({ file }).then(
        (opened) => opened.close().then(() => 'opened'),
        (error: unknown) => error,
      );
    };
    expect((await compactEventLog(file, { now: LATER, fs })).compacted).toBe(true);
    expect(refused).toMatchObject({ code: 'journal_locked' });
  });

  it('lets appends called during an open writer compaction wait and follow it in call order (TJ-DUR-006)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const fs = faultyFileSystem(nodeFileSystem);
    const log = await openEventLog({ file, fs, clock: steppingClock(T0) });
    await deliveredRun(log, 'r');
    const c = await log.checkpoint();
    const pending: Promise<{ seq: number }>[] = [];
    fs.before = async (op) => {
      if (op !== 'rename') return;
      fs.before = undefined;
      pending.push(log.appendMessage({ role: 'user', content: 'during 1' }));
      pending.push(log.appendMessage({ role: 'user', content: 'during 2' }));
    };
    const compaction = log.compact({ now: LATER });
    expect((await compaction).compacted).toBe(true);
    expect((await Promise.all(pending)).map((ack) => ack.seq)).toEqual([c.seq + 1, c.seq + 2]);
    await log.close();
    expect(seqsOf(file)).toEqual([c.seq, c.seq + 1, c.seq + 2]);
    expect(recordsOf(file).map((r) => r.type)).toEqual(['checkpoint', 'message_append', 'message_append']);
  });
});

describe('delivery expiry in compaction (TJ-RET-018, TJ-LIVE-015)', () => {
  it('a finished run nobody acknowledged blocks compaction within the delivery window, and expires after it', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, clock: steppingClock(T0) });
    await log.chatStarted({ requestId: 'lost', content: 'q' });
    await log.appendMessage({ role: 'user', content: 'q' });
    const done = await log.chatDone({ requestId: 'lost' });
    const checkpoint = await log.checkpoint();
    const before = readFileSync(file);

    // 47 hours after the finishing record: still undelivered, nothing removed.
    let report = await log.compact({ now: T0 + 47 * 3600 * 1000, retentionSeconds: 0 });
    expect(report).toMatchObject({
      compacted: false,
      reason: 'undelivered_run',
      blockedBy: { requestId: 'lost', seq: 0 },
      expiredRuns: [],
    });
    expect(Buffer.compare(readFileSync(file), before)).toBe(0);

    // 49 hours after: the run's delivery expired (48 h by default), so the checkpoint may lead; no ack is written.
    report = await log.compact({ now: T0 + 49 * 3600 * 1000, retentionSeconds: 0 });
    expect(report).toMatchObject({ compacted: true, checkpointSeq: checkpoint.seq, expiredRuns: ['lost'] });
    expect(seqsOf(file)).toEqual([checkpoint.seq]);
    expect(recordsOf(file).some((r) => r.type === 'delivery.ack')).toBe(false);
    expect(done.seq).toBe(2);
    // The request id is still known after its records went: the checkpoint's run index keeps it (TJ-EVENT-019).
    expect(log.runs().get('lost')).toMatchObject({ finish: 'done', acked: false });
    await log.close();
    const reopened = await openEventLog({ file });
    const refusal = await reopened.chatStarted({ requestId: 'lost' }).catch((e: unknown) => e);
    expect((refusal as { code?: string }).code).toBe('illegal_transition');
    await reopened.close();
  });

  it('counts a record stamped while the clock was ahead as written when the next plausibly stamped record was (TJ-RET-019)', async () => {
    // The clock was 30 days ahead while r1 and "lost" were written, then corrected.
    const file = join(tempDir(), 'events.jsonl');
    let wall = T0 + 30 * DAY;
    const log = await openEventLog({ file, clock: () => wall, checkpointInterval: 1000 });
    await deliveredRun(log, 'r1');
    await log.chatStarted({ requestId: 'lost', content: 'q' });
    await log.chatDone({ requestId: 'lost' });
    await log.checkpoint();
    const ahead = recordsOf(file).length;
    // While no plausibly stamped record follows them, they count as written now: they block, as young records do.
    let report = await log.compact({ now: T0 + HOUR, retentionSeconds: 0, deliveryWindowSeconds: 0 });
    expect(report).toMatchObject({ compacted: false, futureStampedRecords: ahead, expiredRuns: [] });
    wall = T0 + HOUR;
    await deliveredRun(log, 'r2');
    const c = await log.checkpoint();
    // 49 hours after the correction: outside the 48 h windows. Before, r1's records were "young" for 30 more days.
    report = await log.compact({ now: T0 + 50 * HOUR });
    expect(report).toMatchObject({
      compacted: true,
      checkpointSeq: c.seq,
      futureStampedRecords: ahead,
      expiredRuns: ['lost'],
    });
    expect(seqsOf(file)[0]).toBe(c.seq);
    await log.close();
  });

  it('refuses a negative or NaN delivery window with invalid_option', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file });
    for (const bad of [-1, Number.NaN])
      expect(await log.compact({ deliveryWindowSeconds: bad }).catch((e: unknown) => e)).toMatchObject({
        code: 'invalid_option',
      });
    await log.close();
  });
});
