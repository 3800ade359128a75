// A session whose files are removed and created again starts a new log at seq 0 (spec §18.4). Before epochs, a client
// whose cursor came from the old log was served by the cursor alone: once the new log had grown past it, the client
// received the new conversation's records after its cursor and never the ones before it. The epoch (spec §6.7) names
// the history a cursor belongs to: a client sends it back and gets a `reset` snapshot instead (TJ-LIVE-020).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type ConversationHub, type HubSession, openConversationHub } from '@turnjournal/live';
import { recoverEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { logLines, take, tempStore } from './support.js';

/** Sends run `requestId` and streams `deltas` deltas and a tool call through it to `done`. */
async function run(session: HubSession, requestId: string, deltas: number): Promise<void> {
  const sent = await session.send({ requestId, content: `question ${requestId}` });
  if (!sent.created) throw new Error(`expected a new run ${requestId}`);
  for (let i = 0; i < deltas; i += 1) await sent.run.delta(`d${i} `);
  await sent.run.toolStart({ toolCallId: `${requestId}.t`, tool: 'shell' });
  await sent.run.toolResult({ toolCallId: `${requestId}.t`, output: 'ok' });
  await sent.run.done();
}

/** A hub on `root` (no background jobs) and its session s1. */
async function open(root: string): Promise<{ hub: ConversationHub; session: HubSession }> {
  const hub = openConversationHub({ root, retention: false });
  return { hub, session: await hub.session('s1') };
}

describe('the epoch of a live session (spec §6.7, §18)', () => {
  it("carries the log's epoch in every snapshot, as the file's first record and every checkpoint hold it (TJ-LIVE-021, TJ-EVENT-023, TJ-EVENT-024)", async () => {
    const root = tempStore('tj-live-epoch-');
    const { hub, session } = await open(root);
    expect(session.snapshot().epoch).toBeNull(); // an empty log has none
    await run(session, 'r1', 120); // past the default checkpoint interval: the log holds checkpoints
    const epoch = session.snapshot().epoch;
    expect(epoch).toMatch(/^[0-9a-f-]{36}$/);
    const lines = logLines(join(root, 's1', 'events.jsonl')) as unknown as Record<string, unknown>[];
    const carrying = lines.filter((line) => 'epoch' in line);
    expect(carrying.map((line) => line.type)).toEqual([
      lines[0]?.type,
      ...lines.filter((line) => line.type === 'checkpoint').map(() => 'checkpoint'),
    ]);
    expect(carrying.length).toBeGreaterThan(1);
    expect(new Set(carrying.map((line) => line.epoch))).toEqual(new Set([epoch]));
    // A reader's recovery from the last checkpoint finds the same epoch (TJ-EVENT-025).
    expect((await recoverEventLog(join(root, 's1', 'events.jsonl'))).epoch).toBe(epoch);
    await hub.close();
    // Reopened, the log keeps its epoch.
    const again = await open(root);
    expect(again.session.snapshot().epoch).toBe(epoch);
    await again.hub.close();
  });

  it('hands subscribers the epoch on the records that carry it in the file (TJ-LIVE-022)', async () => {
    const root = tempStore('tj-live-epoch-');
    const { hub, session } = await open(root);
    const subscription = session.subscribe({ after: -1 });
    await run(session, 'r1', 60);
    const events = await take(subscription, session.durableSeq + 1);
    subscription.close();
    const epoch = session.snapshot().epoch;
    const delivered = events.flatMap((e) => (e.kind === 'record' ? [e.record] : []));
    expect(delivered.map((r) => r.seq)).toEqual(Array.from({ length: delivered.length }, (_, i) => i));
    const lines = logLines(join(root, 's1', 'events.jsonl')) as unknown as Record<string, unknown>[];
    // Each record delivered carries an epoch exactly where its line does, and the same one.
    expect(delivered.map((r) => r.epoch ?? null)).toEqual(lines.map((line) => line.epoch ?? null));
    expect(delivered[0]?.epoch).toBe(epoch);
    await hub.close();
  });

  it('answers a cursor of the removed history with a reset snapshot, not the new log records after it (TJ-LIVE-020)', async () => {
    const root = tempStore('tj-live-epoch-');
    const first = await open(root);
    await run(first.session, 'r1', 3);
    const old = first.session.snapshot();
    expect(old.epoch).not.toBeNull();
    await first.hub.close();
    // The session's files are removed; the next open creates them afresh, and the new conversation outgrows the
    // client's cursor.
    rmSync(join(root, 's1'), { recursive: true });
    rmSync(join(root, '_turn_journal'), { recursive: true });
    const second = await open(root);
    await run(second.session, 'n1', 3);
    await run(second.session, 'n2', 3);
    const now = second.session.snapshot();
    const cursor = old.lastSeq as number;
    expect(now.lastSeq).toBeGreaterThan(cursor + 2);
    expect(now.epoch).not.toBeNull();
    expect(now.epoch).not.toBe(old.epoch);

    // With the epoch of its cursor: the whole current view, then nothing it already has.
    const resumed = second.session.subscribe({ after: cursor, epoch: old.epoch });
    const [reset] = await take(resumed, 1);
    resumed.close();
    expect(reset).toMatchObject({ kind: 'snapshot', reason: 'reset' });
    if (reset?.kind !== 'snapshot') throw new Error('expected a snapshot');
    expect(reset.view.lastSeq).toBe(now.lastSeq);
    expect(reset.view.epoch).toBe(now.epoch);
    expect(reset.view.messages).toEqual(now.messages);

    // A cursor of this history with its epoch is served by the cursor (TJ-LIVE-009).
    const same = second.session.subscribe({ after: cursor, epoch: now.epoch });
    const records = await take(same, 2);
    same.close();
    expect(records.map((e) => (e.kind === 'record' ? e.record.seq : e.kind))).toEqual([cursor + 1, cursor + 2]);

    // A cursor with an epoch of none (a log that had none) is another history too; a client holding nothing
    // (`after` -1) has no cursor to check.
    const none = second.session.subscribe({ after: cursor, epoch: null });
    expect((await take(none, 1))[0]).toMatchObject({ kind: 'snapshot', reason: 'reset' });
    none.close();
    const fresh = second.session.subscribe({ after: -1, epoch: old.epoch });
    expect((await take(fresh, 1))[0]).toMatchObject({ kind: 'record', record: { seq: 0 } });
    fresh.close();

    // Without an epoch the cursor alone decides, as before epochs: the new log's records after the old cursor.
    const blind = second.session.subscribe({ after: cursor });
    expect((await take(blind, 1))[0]).toMatchObject({ kind: 'record', record: { seq: cursor + 1 } });
    blind.close();
    await second.hub.close();
  });

  it('refuses an epoch that is neither a string nor null', async () => {
    const root = tempStore('tj-live-epoch-');
    const { hub, session } = await open(root);
    expect(() => session.subscribe({ after: 0, epoch: 42 as unknown as string })).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
    await hub.close();
  });
});
