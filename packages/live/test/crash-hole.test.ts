// Regression (spec §18.3, TJ-LIVE-009, TJ-LIVE-018): a power loss can lose an unsynced record while a later unsynced
// one survives, glued after the zero-filled region the lost write left (TJ-FRAME-029). The log then holds seqs 0, 1,
// 3, 4: a subscriber whose cursor is 1 must get a snapshot, never record 3 right after record 1. This is the shrunk
// counterexample of the subscribe property (crash, join, send, three deltas, crash, reconnect), with the crash image
// written out byte for byte instead of drawn from the simulator, so that it does not depend on the delta timer.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LiveEvent, openConversationHub } from '@turnjournal/live';
import { replayEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { take, tempStore } from './support.js';

function summary(events: readonly LiveEvent[]): string[] {
  return events.map((e) =>
    e.kind === 'record'
      ? `record ${e.record.seq}`
      : e.kind === 'snapshot'
        ? `snapshot ${e.reason} ${e.view.lastSeq}`
        : `cut_off ${e.cursor}`,
  );
}

/** A store whose event log holds records 0 and 1, a zero-filled region where record 2 was, then record 3 glued after it. */
async function crashedStore(): Promise<string> {
  const root = tempStore('tj-live-hole-');
  const hub = openConversationHub({ root, retention: false });
  const session = await hub.session('s1');
  const sent = await session.send({ requestId: 'r1', content: 'q1' });
  expect(sent.created).toBe(true);
  await hub.close();
  const file = join(root, 's1', 'events.jsonl');
  // A clean close cancels the run (TJ-LIVE-036); the crash left only what the send made durable.
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(0, 2);
  writeFileSync(file, `${lines.join('\n')}\n`);
  expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([0, 1]);
  const ts = (JSON.parse(lines[1] as string) as { ts: string }).ts;
  const record2 = JSON.stringify({
    seq: 2,
    ts,
    type: 'assistant.segment.started',
    payload: { request_id: 'r1', message_id: 'r1.a1' },
  });
  const record3 = JSON.stringify({
    seq: 3,
    ts,
    type: 'chat.delta',
    payload: { request_id: 'r1', message_id: 'r1.a1', text: '.' },
  });
  // The write of record 2 reached the disk as NULs only (its size did, its data did not); record 3's write survived.
  appendFileSync(file, `${'\u0000'.repeat(record2.length + 1)}${record3}\n`);
  return root;
}

describe('a crash hole in never-durable records (TJ-LIVE-018)', () => {
  it('the log holds 0, 1, 3 and the recovery record 4; a subscriber at cursor 0 or 1 never skips seq 2 silently', async () => {
    const root = await crashedStore();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    // The writer continues after the salvaged record 3 (TJ-EVENT-004): recovery's chat.cancelled is 4, not 2 or 3.
    expect(session.durableSeq).toBe(4);
    const replay = await replayEventLog(join(root, 's1', 'events.jsonl'));
    if (replay.kind !== 'records') throw new Error('expected records');
    expect(replay.records.map((r) => [r.value.seq, r.value.type])).toEqual([
      [0, 'chat.started'],
      [1, 'message_append'],
      [3, 'chat.delta'],
      [4, 'chat.cancelled'],
    ]);

    // Cursor 0: record 1 from the log, then a snapshot through the head instead of record 3.
    const fromZero = session.subscribe({ after: 0 });
    expect(summary(await take(fromZero, 2))).toEqual(['record 1', 'snapshot compacted 4']);
    fromZero.close();
    // Cursor 1: the record after it is gone, so a snapshot at once.
    const fromOne = session.subscribe({ after: 1 });
    expect(summary(await take(fromOne, 1))).toEqual(['snapshot compacted 4']);
    // Live from there on: the next durable record follows the snapshot's last_seq.
    const next = session.send({ requestId: 'r2', content: 'q2' });
    expect(summary(await take(fromOne, 1))).toEqual(['record 5']);
    fromOne.close();
    const sent = await next;
    if (sent.created) await sent.run.done();
    await hub.close();
  });
});
