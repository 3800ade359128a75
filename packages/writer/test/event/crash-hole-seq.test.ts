// A power loss can keep a later unsynced append while losing an earlier one: the earlier one's range reads as NULs
// and the later record is glued after them (spec §3.6). A reader salvages that record (TJ-FRAME-029), so its seq has
// been seen; the writer must continue after it and never give that seq, or the lost one's, to a new record
// (TJ-EVENT-003, TJ-EVENT-004; TJ-LIVE-008 depends on it).
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayEventLog } from '@turnjournal/reader';
import { openEventLog } from '@turnjournal/writer';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function line(seq: number, content: string): string {
  return JSON.stringify({
    seq,
    ts: '2026-05-11T10:00:00.000Z',
    type: 'message_append',
    payload: { message: { role: 'user', content } },
  });
}

describe('seq after a crash hole (TJ-EVENT-003, TJ-EVENT-004)', () => {
  it.each([
    ['a record glued after a zero-filled region', (lost: string) => '\u0000'.repeat(lost.length + 1)],
    ['a record glued after a torn write', (lost: string) => lost.slice(0, 20)],
  ])('%s: the writer continues after the salvaged record, and a reader sees each seq once', async (_, hole) => {
    const dir = mkdtempSync(join(tmpdir(), 'tj-hole-'));
    dirs.push(dir);
    const file = join(dir, 'events.jsonl');
    const first = await openEventLog({ file });
    await first.appendMessage({ role: 'user', content: 'm0' });
    await first.appendMessage({ role: 'user', content: 'm1' });
    await first.close();
    appendFileSync(file, `${hole(line(2, 'lost'))}${line(3, 'salvaged')}\n`);

    const before = await replayEventLog(file);
    if (before.kind !== 'records') throw new Error('expected records');
    expect(before.records.map((r) => r.value.seq)).toEqual([0, 1, 3]);

    const reopened = await openEventLog({ file });
    expect(reopened.lastSeq).toBe(3);
    expect(reopened.snapshot().messages.map((m) => m.content)).toEqual(['m0', 'm1', 'salvaged']);
    const ack = await reopened.appendMessage({ role: 'user', content: 'm4' });
    expect(ack.seq).toBe(4);
    await reopened.close();

    const after = await replayEventLog(file);
    if (after.kind !== 'records') throw new Error('expected records');
    expect(
      after.records.map((r) => [r.value.seq, (r.value.payload as { message: { content: string } }).message.content]),
    ).toEqual([
      [0, 'm0'],
      [1, 'm1'],
      [3, 'salvaged'],
      [4, 'm4'],
    ]);
    // The hole is reported, never hidden: the damage, then the jump in seq.
    const codes = after.findings.map((f) => f.code);
    expect(codes).toContain('seq_gap');
    expect(codes.some((c) => c === 'zero_filled_region' || c === 'glued_record')).toBe(true);
  });
});
