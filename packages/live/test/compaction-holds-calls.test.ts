// compact() — and the in-process retention job, which runs it hourly on every open session — while a run streams and
// clients acknowledge: the calls made meanwhile wait for it and then run in the order they were made (the "appends
// wait meanwhile" of compact()). Before, each was refused with "the session is compacting": the worker's deltas,
// tool records and end threw, and a send whose `submitted` was being written when the job began failed the session.
import { join } from 'node:path';
import { openConversationHub } from '@turnjournal/live';
import { type FileSystem, nodeFileSystem } from '@turnjournal/writer/file-system';
import { describe, expect, it } from 'vitest';
import { type LogLine, logLines, tempStore, withPaths } from './support.js';

/** The records of session s1's event log, checkpoints left out. */
function lines(root: string): LogLine[] {
  return logLines(join(root, 's1', 'events.jsonl')).filter((record) => record.type !== 'checkpoint');
}

/** A record's type with what tells it apart: a delta's text, a message's content. */
function label(record: LogLine): string {
  const payload = record.payload as { text?: string; message?: { content?: string }; request_id?: string };
  if (record.type === 'chat.delta') return `delta ${payload.text}`;
  if (record.type === 'message_append') return `message ${payload.message?.content}`;
  return `${record.type} ${payload.request_id ?? ''}`.trim();
}

describe('calls made while the session compacts', () => {
  it('wait for the compaction and run in the order they were made', async () => {
    const root = tempStore('tj-live-compacting-');
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const first = await session.send({ requestId: 'r0', content: 'earlier' });
    if (!first.created) throw new Error('expected a new run');
    await first.run.delta('old answer');
    await first.run.done();
    const sent = await session.send({ requestId: 'r1', content: 'now' });
    if (!sent.created) throw new Error('expected a new run');
    const subscription = session.subscribe({ after: session.durableSeq });
    const before = lines(root).length;

    const compacting = session.compact();
    // The worker streams on and a client acknowledges the earlier run, none of it awaited one by one.
    const calls = [
      sent.run.delta('a'),
      sent.run.delta('b'),
      sent.run.toolStart({ toolCallId: 'c1', tool: 'search' }),
      sent.run.delta('c'),
      session.ack('r0', { clientId: 'web' }),
      sent.run.done(),
    ];
    const outcomes = await Promise.allSettled([...calls, compacting]);
    expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).toEqual(
      Array(calls.length + 1).fill('ok'),
    );
    const after = lines(root).slice(before).map(label);
    expect(after).toEqual([
      'assistant.segment.started r1',
      'delta a',
      'delta b',
      'message ab',
      'tool.start r1',
      'assistant.segment.started r1',
      'delta c',
      'delivery.ack r0',
      'message c',
      'chat.done r1',
    ]);
    // Subscribers get the same records, once each.
    const delivered: string[] = [];
    for (let i = 0; i < after.length; i += 1) {
      const next = await subscription.next();
      if (next.done === true || next.value.kind !== 'record') break;
      if (next.value.record.type !== 'checkpoint') delivered.push(label(next.value.record as unknown as LogLine));
      else i -= 1;
    }
    expect(delivered).toEqual(after);
    expect(session.statusOf('r1')).toBe('done');
    await hub.close();
  });

  it('a send whose submitted is being written when a compaction begins waits for it, and the session goes on', async () => {
    const root = tempStore('tj-live-compacting-');
    // Syncs of the turn journal and reads of the event log (the compaction reads it) wait for the test, so that the
    // two overlap.
    const { fs: tracked, pathOf } = withPaths(nodeFileSystem);
    const held = { turns: null as Promise<void> | null, reads: null as Promise<void> | null };
    const fs: FileSystem = {
      ...tracked,
      async fdatasync(fd) {
        if (pathOf(fd)?.includes('_turn_journal') && held.turns !== null) await held.turns;
        return nodeFileSystem.fdatasync(fd);
      },
      async fsync(fd) {
        if (pathOf(fd)?.includes('_turn_journal') && held.turns !== null) await held.turns;
        return nodeFileSystem.fsync(fd);
      },
      async read(fd, buffer, offset, length, position) {
        if (pathOf(fd)?.includes('events.jsonl') && held.reads !== null) await held.reads;
        return nodeFileSystem.read(fd, buffer, offset, length, position);
      },
    };
    const hub = openConversationHub({ root, fs, retention: false });
    const session = await hub.session('s1');
    // A finished, acknowledged run for the compaction to remove.
    const first = await session.send({ requestId: 'r0', content: 'earlier' });
    if (!first.created) throw new Error('expected a new run');
    await first.run.done();
    await session.ack('r0');
    let releaseTurns = (): void => undefined;
    let releaseReads = (): void => undefined;
    held.turns = new Promise((resolve) => {
      releaseTurns = resolve;
    });
    held.reads = new Promise((resolve) => {
      releaseReads = resolve;
    });
    const sending = session.send({ requestId: 'r1', content: 'hi' });
    // `submitted` is being synced; the compaction starts and waits in its read of the log.
    let compacted = false;
    const compacting = session.compact({ retentionSeconds: 0 }).finally(() => {
      compacted = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // `submitted` is durable while the compaction still runs: the run's records must wait for it, not fail.
    held.turns = null;
    releaseTurns();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(compacted).toBe(false);
    held.reads = null;
    releaseReads();
    const [sent] = await Promise.all([sending, compacting]);
    expect(sent.created).toBe(true);
    if (sent.created) {
      await sent.run.delta('fine');
      await sent.run.done();
    }
    expect(session.statusOf('r1')).toBe('done');
    expect(lines(root).map(label).slice(-6)).toEqual([
      'chat.started r1',
      'message hi',
      'assistant.segment.started r1',
      'delta fine',
      'message fine',
      'chat.done r1',
    ]);
    await hub.close();
  });
});
