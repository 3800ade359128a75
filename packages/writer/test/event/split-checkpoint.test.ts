import { statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { recoverEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { type EventLog, nodeFileSystem, openEventLog } from '../support/internals.js';
import { readLinesOf } from '../support/space.js';
import { tempDir } from '../support/temp.js';
import { fullFold, recordsOf } from './support.js';

const LIMIT = 4096;
const msg = (i: number) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} ${'x'.repeat(300)}` });

function open(file: string): Promise<EventLog> {
  return openEventLog({ file, fs: nodeFileSystem, durability: 'none', checkpointInterval: 5, maxLineBytes: LIMIT });
}

/** A conversation of `count` messages, a finished and acknowledged run every 25 of them, far past the 4 KiB limit. */
async function conversation(file: string, count: number): Promise<void> {
  const log = await open(file);
  for (let i = 0; i < count; i++) {
    if (i % 25 === 0) await log.chatStarted({ requestId: `r${i}` });
    await log.appendMessage(msg(i));
    if (i % 25 === 0) {
      await log.chatDone({ requestId: `r${i}` });
      await log.ack(`r${i}`);
    }
  }
  await log.close();
}

interface Line {
  readonly offset: number;
  readonly length: number;
  readonly value: Record<string, unknown>;
}

function linesOf(file: string): Line[] {
  const bytes = readLinesOf(file);
  const lines: Line[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const end = bytes.indexOf(0x0a, offset);
    lines.push({ offset, length: end - offset, value: JSON.parse(bytes.toString('utf8', offset, end)) });
    offset = end + 1;
  }
  return lines;
}

/** The offset of the first part of each split checkpoint of the file, in order. */
function firstParts(file: string): number[] {
  return linesOf(file)
    .filter((l) => l.value.type === 'checkpoint.part' && (l.value.payload as { part: number }).part === 0)
    .map((l) => l.offset);
}

describe('split checkpoints (spec §6.2)', () => {
  it('writes a checkpoint over the line-size limit as parts within it, holding the list in order (TJ-EVENT-028, TJ-EVENT-030)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    await conversation(file, 300);
    const lines = linesOf(file);
    const list: unknown[] = [];
    let sets = 0;
    for (let i = 0; i < lines.length; i++) {
      const { value, length } = lines[i] as Line;
      expect(length).toBeLessThanOrEqual(LIMIT);
      if (value.type === 'message_append') list.push((value.payload as { message: unknown }).message);
      if (value.type !== 'checkpoint.part') continue;
      const { parts } = value.payload as { parts: number };
      const set = lines.slice(i, i + parts).map((l) => l.value);
      set.forEach((part, n) => {
        expect(part).toMatchObject({
          type: 'checkpoint.part',
          seq: (value.seq as number) + n,
          payload: { part: n, parts },
        });
        // The run index on the last part only.
        expect('runs' in (part.payload as object)).toBe(n === parts - 1);
      });
      expect(set.flatMap((part) => (part.payload as { messages: unknown[] }).messages)).toEqual(list);
      sets += 1;
      i += parts - 1;
    }
    expect(sets).toBeGreaterThan(2);
  });

  it('never splits a checkpoint that fits one line (TJ-EVENT-029)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, fs: nodeFileSystem, durability: 'none', checkpointInterval: 5 });
    for (let i = 0; i < 300; i++) await log.appendMessage(msg(i));
    await log.close();
    const types = recordsOf(file).map((r) => r.type);
    expect(types).toContain('checkpoint');
    expect(types).not.toContain('checkpoint.part');
  });

  it('reopens from the last split checkpoint, reading its tail only, with its run index (TJ-REPLAY-020, TJ-EVENT-017)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    await conversation(file, 300);
    const last = firstParts(file).at(-1) as number;
    const log = await open(file);
    try {
      expect(log.recovery.checkpointCursor).toBe(last);
      expect(log.snapshot().messages).toEqual((await fullFold(file)).messages);
      expect(log.snapshot().messages).toHaveLength(300);
      // The runs before the checkpoint come from the last part's run index.
      expect(log.runs().size).toBe(12);
      await expect(log.chatStarted({ requestId: 'r0' })).rejects.toMatchObject({ code: 'illegal_transition' });
    } finally {
      await log.close();
    }
    const recovered = await recoverEventLog(file, { maxLineBytes: LIMIT, chunkBytes: 4096 });
    expect(recovered.checkpointOffset).toBe(last);
    expect(recovered.bytesRead).toBeLessThanOrEqual(2 * (statSync(file).size - last) + 2 * 4096);
  });

  it('a manual checkpoint() over the limit resolves once every part is written', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await open(file);
    for (let i = 0; i < 40; i++) await log.appendMessage(msg(i));
    const ack = await log.checkpoint();
    const lastSeq = log.lastSeq as number;
    await log.close();
    const records = recordsOf(file);
    const first = records.find((r) => r.seq === ack.seq);
    expect(first).toMatchObject({ type: 'checkpoint.part', payload: { part: 0 } });
    expect(records.at(-1)).toMatchObject({ seq: lastSeq, type: 'checkpoint.part' });
  });

  it('compaction keeps the last split checkpoint from its first part, and the log shrinks (TJ-RET-021)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    await conversation(file, 300);
    const before = statSync(file).size;
    const messages = (await fullFold(file)).messages;
    const last = firstParts(file).at(-1) as number;
    const log = await open(file);
    const compaction = await log.compact({ retentionSeconds: 0 });
    await log.close();
    expect(compaction).toMatchObject({ compacted: true, removedBytes: last });
    expect(recordsOf(file)[0]).toMatchObject({ type: 'checkpoint.part', payload: { part: 0 } });
    expect(statSync(file).size).toBe(before - last);
    expect(statSync(file).size).toBeLessThan(before / 2);
    expect((await fullFold(file)).messages).toEqual(messages);
    const reopened = await open(file);
    expect(reopened.snapshot().messages).toEqual(messages);
    expect(reopened.runs().size).toBe(12);
    await reopened.close();
  });

  it('after a crash between parts (last part torn or missing), opens from the previous checkpoint (TJ-REPLAY-020)', async () => {
    for (const cut of ['torn', 'missing'] as const) {
      const file = join(tempDir(), 'events.jsonl');
      await conversation(file, 300);
      const lines = linesOf(file);
      const lastPart = lines.findLast((l) => {
        const payload = l.value.payload as { part?: number; parts?: number } | undefined;
        return l.value.type === 'checkpoint.part' && payload?.part === (payload?.parts ?? 0) - 1;
      }) as Line;
      const previous = firstParts(file).at(-2) as number;
      truncateSync(file, lastPart.offset + (cut === 'torn' ? 100 : 0));
      const expected = await fullFold(file);
      const log = await open(file);
      try {
        expect(log.recovery.checkpointCursor).toBe(previous);
        expect(log.snapshot().messages).toEqual(expected.messages);
        expect(log.findings.map((f) => f.code)).toContain('incomplete_checkpoint');
        // The log goes on from the last accepted record, and its next checkpoint is whole.
        const seq = (await log.appendMessage(msg(1000))).seq;
        expect(seq).toBe((expected.lastSeq as number) + 1);
        await log.checkpoint();
      } finally {
        await log.close();
      }
      const recovered = await recoverEventLog(file, { maxLineBytes: LIMIT });
      expect(recovered.messages).toEqual((await fullFold(file)).messages);
      expect(recovered.messages.at(-1)).toEqual(msg(1000));
    }
  });
});
