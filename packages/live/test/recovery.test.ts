// Restart recovery of what a crash left half-done (spec §18.5): a turn submitted whose run never started gets its
// user message back (TJ-LIVE-019), and every unfinished run is cancelled — runs abandoned before the last one too,
// which only the run index knows after a reopen (TJ-LIVE-016, TJ-EVENT-020).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openConversationHub } from '@turnjournal/live';
import { checkStore, replayEventLog } from '@turnjournal/reader';
import { openSessionJournals } from '@turnjournal/writer';
import { describe, expect, it } from 'vitest';
import { tempStore } from './support.js';

function store(): string {
  const dir = tempStore('tj-live-recover-');
  return dir;
}

async function eventTypes(root: string): Promise<[string, unknown][]> {
  const replay = await replayEventLog(join(root, 's1', 'events.jsonl'));
  if (replay.kind !== 'records') throw new Error('expected records');
  return replay.records.map((r) => {
    const payload = r.value.payload as { request_id?: unknown; message?: { request_id?: unknown } };
    return [r.value.type as string, payload.request_id ?? payload.message?.request_id];
  });
}

describe('restart recovery (TJ-LIVE-016, TJ-LIVE-019)', () => {
  it('restores the user message of a turn that crashed after submitted and before its run started', async () => {
    const root = store();
    // The state a crash leaves between the two durable steps of send (TJ-LIVE-003): submitted, nothing in the log.
    const journals = await openSessionJournals({ root, sessionId: 's1' });
    await journals.turns.submit({
      turnId: 'r1',
      content: 'please keep my words',
      streamId: 'r1',
      attachments: [{ name: 'a.txt', path: 'uploads/a.txt', mime: 'text/plain', size: 3 }],
    });
    await journals.close();

    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const view = session.snapshot();
    expect(view.messages).toEqual([
      {
        role: 'user',
        content: 'please keep my words',
        id: 'r1.user',
        request_id: 'r1',
        attachments: [{ name: 'a.txt', path: 'uploads/a.txt', mime: 'text/plain', size: 3 }],
      },
    ]);
    expect(view.activeRun).toBeNull();
    // No run was started or answered, and the turn is closed; a retry is answered from the existing turn.
    expect(await eventTypes(root)).toEqual([['message_append', 'r1']]);
    expect(await session.send({ requestId: 'r1', content: 'please keep my words' })).toMatchObject({
      created: false,
      status: 'interrupted',
    });
    await hub.close();
    const check = await checkStore([root]);
    expect(check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state]))).toEqual([['r1', 'interrupted']]);
    // A second open restores nothing twice.
    const again = openConversationHub({ root, retention: false });
    expect((await again.session('s1')).snapshot().messages).toHaveLength(1);
    await again.close();
  });

  it('cancels a run abandoned before the last one, which the tail fold does not see', async () => {
    const root = store();
    // An older writer crashed with run "old" open; a later one (without the run index) started "last" after a
    // checkpoint whose index lists "old" unfinished. The reopen folds from that checkpoint: only "last" is active there.
    const ts = '2026-06-19T03:14:07Z';
    const lines = [
      { seq: 0, ts, type: 'chat.started', payload: { request_id: 'old', content: 'q1' } },
      { seq: 1, ts, type: 'message_append', payload: { message: { role: 'user', content: 'q1' } } },
      {
        seq: 2,
        ts,
        type: 'checkpoint',
        payload: {
          messages: [{ role: 'user', content: 'q1' }],
          runs: [
            {
              request_id: 'old',
              started_seq: 0,
              started_ts: ts,
              outcome: null,
              finished_seq: null,
              finished_ts: null,
              acked: false,
              acked_by: [],
            },
          ],
        },
      },
      { seq: 3, ts, type: 'chat.started', payload: { request_id: 'last', content: 'q2' } },
    ];
    mkdirSync(join(root, 's1'));
    writeFileSync(join(root, 's1', 'events.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    expect(session.statusOf('old')).toBe('cancelled');
    expect(session.statusOf('last')).toBe('cancelled');
    expect((await eventTypes(root)).slice(4)).toEqual([
      ['chat.cancelled', 'old'],
      ['chat.cancelled', 'last'],
    ]);
    await hub.close();
  });

  // The hub refuses the delta that would make a segment's message longer than a line (TJ-LIVE-004), but a log written
  // before that refusal, or by another program, can hold such an open segment. Recovery's append of the partial
  // message was refused, its rejection went unhandled (which ends a Node process) and the text was lost.
  it('commits the longest prefix of an open segment too long for one line, still marked partial (TJ-LIVE-017)', async () => {
    const root = store();
    const ts = '2026-06-19T03:14:07Z';
    const chunk = 'a'.repeat(1024 * 1024);
    const lines: unknown[] = [
      { seq: 0, ts, type: 'chat.started', payload: { request_id: 'r1', content: 'q' } },
      { seq: 1, ts, type: 'message_append', payload: { message: { role: 'user', content: 'q', id: 'r1.user' } } },
    ];
    lines.push({ seq: 2, ts, type: 'assistant.segment.started', payload: { request_id: 'r1', message_id: 'm1' } });
    for (let i = 0; i < 17; i += 1)
      lines.push({ seq: 3 + i, ts, type: 'chat.delta', payload: { request_id: 'r1', message_id: 'm1', text: chunk } });
    mkdirSync(join(root, 's1'));
    writeFileSync(join(root, 's1', 'events.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const hub = openConversationHub({ root, retention: false });
      const session = await hub.session('s1');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      expect(session.statusOf('r1')).toBe('cancelled');
      const partial = session.snapshot().messages.filter((m) => m.role === 'assistant');
      expect(partial).toHaveLength(1);
      const content = partial[0]?.content as string;
      // The longest prefix whose message fits in 16 MiB: the message's other members take a few dozen bytes.
      expect(content.length).toBeGreaterThan(16 * 1024 * 1024 - 200);
      expect(content.length).toBeLessThan(16 * 1024 * 1024);
      expect(chunk.repeat(17).startsWith(content)).toBe(true);
      expect(partial[0]).toMatchObject({ id: 'm1', request_id: 'r1', partial: true });
      await hub.close();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 30_000);

  it('restores the longest prefix of a user message too long for the log, marked partial (TJ-LIVE-019)', async () => {
    const root = store();
    // The user message's line is a few bytes longer around its content than the `submitted` line: this content fits
    // the one and not the other (the send path refuses it now; a crash of an older hub could leave it).
    const content = 'x'.repeat(16 * 1024 * 1024 - 145);
    const journals = await openSessionJournals({ root, sessionId: 's1' });
    await journals.turns.submit({ turnId: 'r1', content, streamId: 'r1' });
    await journals.close();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const [message] = session.snapshot().messages;
    expect(message).toMatchObject({ role: 'user', id: 'r1.user', request_id: 'r1', partial: true });
    const restored = message?.content as string;
    expect(restored.length).toBeLessThan(content.length);
    expect(restored.length).toBeGreaterThan(content.length - 100);
    expect(content.startsWith(restored)).toBe(true);
    await hub.close();
  }, 30_000);
});
