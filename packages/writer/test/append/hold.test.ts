// Held lines (`AppendFile.appendLine(bytes, { hold: true })`, `EventLog.append(…, { hold: true })`, `none` mode): a
// live session's deltas are accepted at once and reach the OS together with its next sync (TJ-LIVE-007), one write
// per batch instead of one per delta. Writes are counted through the file-system layer, never timed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { AppendFile, holdLine, nodeFileSystem, openEventLog, WriterPoisonedError } from '../support/internals.js';
import { eventRecord } from '../support/journal.js';
import { recordingFileSystem } from '../support/recording-fs.js';
import { tempDir } from '../support/temp.js';

function line(n: number, pad = 0): Uint8Array {
  return Buffer.from(`${JSON.stringify({ ...eventRecord(n), pad: 'x'.repeat(pad) })}\n`);
}

function writesTo(fs: ReturnType<typeof recordingFileSystem>, file: string): number {
  return fs.writes.filter((w) => w.path === file).length;
}

describe('AppendFile: held lines (none mode)', () => {
  it('are acknowledged with their offsets at once, and written in one write with the next line that is not held', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const fs = recordingFileSystem();
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    const lines = Array.from({ length: 50 }, (_, n) => line(n));
    const acks = [];
    for (const bytes of lines) acks.push(await writer.appendLine(bytes, { hold: true }));
    expect(writesTo(fs, file)).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('');
    let offset = 0;
    for (const [n, ack] of acks.entries()) {
      expect(ack).toEqual({ cursor: offset, length: lines[n]?.length });
      offset += lines[n]?.length ?? 0;
    }
    const last = await writer.appendLine(line(50));
    expect(last.cursor).toBe(offset);
    expect(writesTo(fs, file)).toBe(1);
    // Every byte, in order: the held lines were copied into chunks that grew (1 KiB, doubling) as they came.
    expect(readFileSync(file)).toEqual(Buffer.concat([...lines, line(50)]));
    expect(offset).toBeGreaterThan(4096);
    await writer.close();
  });

  it('are written by idle, flush (before its sync) and close', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const fs = recordingFileSystem();
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    await writer.appendLine(line(0), { hold: true });
    await writer.idle();
    expect(writesTo(fs, file)).toBe(1);
    await writer.appendLine(line(1), { hold: true });
    await writer.appendLine(line(2), { hold: true });
    await writer.flush();
    expect(writesTo(fs, file)).toBe(2);
    await writer.appendLine(line(3), { hold: true });
    await writer.close();
    expect(writesTo(fs, file)).toBe(3);
    expect(readFileSync(file, 'utf8').trimEnd().split('\n').length).toBe(4);
  });

  it('held while a close waits for the last write are written before the file is closed', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const writer = await AppendFile.open(file, { durability: 'none' });
    const last = writer.appendLine(line(0));
    const closing = writer.close();
    // Once line 0's write has been taken, the close is waiting for it: a line held now starts no write itself.
    await last;
    await writer.appendLine(line(1), { hold: true });
    await closing;
    expect(readFileSync(file, 'utf8').trimEnd().split('\n').length).toBe(2);
  });

  it('are written once they add up to 64 KiB, without a flush: memory stays bounded', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const fs = recordingFileSystem();
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    // 200 lines of about 1.1 KiB, appended in a loop that never yields to the event loop: each time the held bytes
    // pass the bound, the lines up to it are written (a write of at most 64 KiB), the rest stay held.
    for (let n = 0; n < 200; n += 1) {
      await writer.appendLine(line(n, 1000), { hold: true });
      if (n === 50) expect(writesTo(fs, file)).toBe(0);
    }
    expect(writesTo(fs, file)).toBe(3);
    await writer.close();
    expect(writesTo(fs, file)).toBe(4);
    expect(readFileSync(file, 'utf8').trimEnd().split('\n').length).toBe(200);
  });

  it('are not held in every mode: each append is written and synced before it resolves', async () => {
    const file = join(tempDir(), 'every.jsonl');
    const fs = recordingFileSystem();
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    await writer.appendLine(line(0), { hold: true });
    await writer.appendLine(line(1), { hold: true });
    expect(writesTo(fs, file)).toBe(2);
    await writer.close();
  });

  it('a failed write that loses a held line poisons the file; one that loses only refused lines does not', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    await writer.appendLine(line(0));
    fs.inject({ op: 'write', path: 'held.jsonl', errno: 'ENOSPC' });
    await expect(writer.appendLine(line(1))).rejects.toMatchObject({ code: 'write_failed' });
    expect(writer.poisoned).toBe(false);
    await writer.appendLine(line(1));

    await writer.appendLine(line(2), { hold: true });
    fs.inject({ op: 'write', path: 'held.jsonl', errno: 'ENOSPC' });
    await expect(writer.appendLine(line(3))).rejects.toMatchObject({ code: 'write_failed' });
    expect(writer.poisoned).toBe(true);
    await expect(writer.flush()).rejects.toBeInstanceOf(WriterPoisonedError);
    await expect(writer.appendLine(line(4), { hold: true })).rejects.toBeInstanceOf(WriterPoisonedError);
    // The failed write was truncated back: the file holds the acknowledged lines that were written, nothing torn.
    expect(readFileSync(file, 'utf8').trimEnd().split('\n').length).toBe(2);
    await writer.close().catch(() => undefined);
  });

  // Held lines were acknowledged when they were queued: a close whose write of them fails has lost acknowledged
  // records, and must say so as a failed final sync does (TJ-DUR-015). Before, close resolved and the lines were gone.
  it('close rejects when the write of held lines fails and loses them', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    await writer.appendLine(line(0));
    for (const n of [1, 2, 3]) await writer.appendLine(line(n), { hold: true });
    fs.inject({ op: 'write', path: 'held.jsonl', errno: 'EIO' });
    await expect(writer.close()).rejects.toMatchObject({ code: 'write_failed', operation: 'write', errno: 'EIO' });
    expect(fs.fired).toHaveLength(1);
    expect(readFileSync(file)).toEqual(Buffer.from(line(0)));
  });

  it('close rejects when an earlier write at the hold bound lost held lines, which no append was told of', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    fs.inject({ op: 'write', path: 'held.jsonl', errno: 'ENOSPC' });
    // 200 lines of ~400 bytes: the held lines pass 64 KiB and are written without a flush; that write fails, and the
    // holds after it are refused (writer_poisoned), but the ones before were acknowledged.
    const outcomes: string[] = [];
    for (let n = 0; n < 200; n++)
      outcomes.push(
        await writer.appendLine(line(n, 400), { hold: true }).then(
          () => 'ok',
          (error: { code: string }) => error.code,
        ),
      );
    await writer.idle();
    expect(outcomes[0]).toBe('ok');
    expect(fs.fired).toHaveLength(1);
    expect(writer.poisoned).toBe(true);
    await expect(writer.close()).rejects.toMatchObject({ code: 'write_failed', errno: 'ENOSPC' });
  });
});

describe('AppendFile: lines held synchronously (holdLine)', () => {
  it('joins text and bytes to the held lines in call order, written with the next line that is not held', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const fs = recordingFileSystem();
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    const lines = [line(0), line(1), line(2), line(3)];
    const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
    expect(holdLine(writer, text(lines[0] as Uint8Array), (lines[0] as Uint8Array).length)).toBe(true);
    expect(holdLine(writer, lines[1] as Uint8Array, (lines[1] as Uint8Array).length)).toBe(true);
    expect(holdLine(writer, text(lines[2] as Uint8Array), (lines[2] as Uint8Array).length)).toBe(true);
    expect(writesTo(fs, file)).toBe(0);
    const last = await writer.appendLine(lines[3] as Uint8Array);
    expect(last.cursor).toBe(lines.slice(0, 3).reduce((sum, l) => sum + l.length, 0));
    expect(writesTo(fs, file)).toBe(1);
    expect(readFileSync(file)).toEqual(Buffer.concat(lines));
    await writer.close();
    expect(holdLine(writer, text(lines[0] as Uint8Array), (lines[0] as Uint8Array).length)).toBe(false);
  });

  it('writes nothing of held text whose length was miscounted, and poisons the file', async () => {
    const file = join(tempDir(), 'held.jsonl');
    const writer = await AppendFile.open(file, { durability: 'none' });
    await writer.appendLine(line(0));
    // 'é' is two bytes in UTF-8: a caller that counted characters would leave unwritten memory in the file.
    const miscounted = `${JSON.stringify({ seq: 1, text: 'é' })}\n`;
    expect(holdLine(writer, miscounted, miscounted.length)).toBe(true);
    await expect(writer.flush()).rejects.toBeInstanceOf(WriterPoisonedError);
    expect(writer.poisoned).toBe(true);
    expect(holdLine(writer, miscounted, Buffer.byteLength(miscounted))).toBe(false);
    expect(readFileSync(file)).toEqual(Buffer.from(line(0)));
    await writer.close().catch(() => undefined);
  });

  it('declines where appendLine would not hold: not in none mode', async () => {
    const file = join(tempDir(), 'group.jsonl');
    const writer = await AppendFile.open(file, { durability: 'group' });
    const bytes = line(0);
    expect(holdLine(writer, bytes, bytes.length)).toBe(false);
    await writer.close();
    expect(readFileSync(file, 'utf8')).toBe('');
  });
});

describe('EventLog.append with hold', () => {
  async function openLog() {
    const dir = tempDir();
    const fs = recordingFileSystem();
    const log = await openEventLog({ file: join(dir, 'events.jsonl'), durability: 'none', fs });
    await log.chatStarted({ requestId: 'r1' });
    await log.segmentStarted({ requestId: 'r1', messageId: 'r1.a1' });
    return { log, fs, file: join(dir, 'events.jsonl') };
  }

  it('takes the seq and changes the state at once, and writes the held records with the next one in one write', async () => {
    const { log, fs, file } = await openLog();
    const before = writesTo(fs, file);
    const seqs: number[] = [];
    for (let n = 0; n < 100; n += 1) {
      const ack = await log.append(
        'chat.delta',
        { request_id: 'r1', message_id: 'r1.a1', text: `${n} ` },
        { hold: true },
      );
      seqs.push(ack.seq);
      expect(log.lastSeq).toBeGreaterThanOrEqual(ack.seq);
    }
    expect(writesTo(fs, file)).toBe(before);
    expect(log.snapshot().overlay?.text.startsWith('0 1 2 ')).toBe(true);
    await log.toolStart({ requestId: 'r1', toolCallId: 'c1', tool: 'search' });
    expect(writesTo(fs, file)).toBe(before + 1);
    const records = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; type: string });
    expect(records.filter((r) => r.type === 'chat.delta').map((r) => r.seq)).toEqual(seqs);
    // Every seq once, in order, the automatic checkpoints between the deltas included.
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
    expect(records.at(-1)?.type).toBe('tool.start');
    await log.close();
  });

  it('close rejects when the write of the held deltas fails: they were acknowledged and are lost', async () => {
    const root = tempDir();
    const fs = faultyFileSystem(nodeFileSystem);
    const log = await openEventLog({ root, sessionId: 's1', fs, durability: 'none' });
    await log.chatStarted({ requestId: 'r1', content: 'q' });
    await log.segmentStarted({ requestId: 'r1', messageId: 'a1' });
    for (const text of ['a', 'b', 'c'])
      await log.append('chat.delta', { request_id: 'r1', message_id: 'a1', text }, { hold: true });
    fs.inject({ op: 'write', path: 'events.jsonl', errno: 'EIO' });
    await expect(log.close()).rejects.toMatchObject({ code: 'write_failed', errno: 'EIO' });
    expect(fs.fired).toHaveLength(1);
  });

  it('compaction finds the held records in the file (they are written before it reads)', async () => {
    const { log, file } = await openLog();
    await log.append('chat.delta', { request_id: 'r1', message_id: 'r1.a1', text: 'kept' }, { hold: true });
    await log.compact({ retentionSeconds: 0 });
    expect(readFileSync(file, 'utf8')).toContain('"text":"kept"');
    await log.close();
  });

  it('refuses what the schema refuses, at once and without a seq, like an append that is not held', async () => {
    const { log } = await openLog();
    const seq = log.lastSeq;
    await expect(
      log.append('chat.delta', { request_id: 'r1', message_id: 'r1.a1', text: 42 }, { hold: true }),
    ).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(
      log.append('chat.delta', { request_id: 'r1', message_id: 'r1.a2', text: 'x' }, { hold: true }),
    ).rejects.toMatchObject({ code: 'illegal_transition' });
    expect(log.lastSeq).toBe(seq);
    await log.close();
  });
});
