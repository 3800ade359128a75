// An operator removes a session's directory (or one of its journals) while the hub holds the session open. Before
// TJ-DUR-036 the session went on answering sends, steps and acks as durable while every record went to files no name
// led to: a restart found nothing of them. The session must fail (`session_failed`, caused by `journal_unlinked`) at the first call whose
// records it cannot make durable, and `hub.session()` must then reopen it on fresh journals.
import { existsSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SimulatedFileSystem } from '@turnjournal/conformance';
import { LiveError, openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { logLines, tempStore } from './support.js';

function store(): string {
  const dir = tempStore('tj-live-unlinked-');
  return dir;
}

/** A hub on a fresh store whose session s1 finished run r1. */
async function finishedRun() {
  const root = store();
  const hub = openConversationHub({ root, retention: false });
  const session = await hub.session('s1');
  const first = await session.send({ requestId: 'r1', content: 'hello' });
  if (!first.created) throw new Error('expected a new run');
  await first.run.done();
  return { root, hub, session };
}

/** What the hub created in the store root for session s1: its event log's and its turn journals' directories. */
function sessionEntries(root: string): string[] {
  return ['s1', '_turn_journal'].map((name) => join(root, name)).filter((path) => existsSync(path));
}

describe('a session whose journals were removed under it (TJ-DUR-036)', () => {
  it('fails the session at the next durable call, and hub.session() reopens it on fresh journals', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const first = await session.send({ requestId: 'r1', content: 'hello' });
    if (!first.created) throw new Error('expected a new run');
    await first.run.delta('hi');
    const subscription = session.subscribe({ after: session.durableSeq });
    const waiting = subscription.next();
    // The operator's cleanup: everything of the store is removed while the session is open.
    for (const path of sessionEntries(root)) rmSync(path, { recursive: true, force: true });
    expect(existsSync(join(root, 's1'))).toBe(false);
    const done = await first.run.done().catch((e: unknown) => e);
    expect(done).toMatchObject({ code: 'session_failed', cause: { code: 'journal_unlinked' } });
    // The session is failed: its calls say so, and its subscribers end instead of waiting for records.
    const after = await session.send({ requestId: 'r2', content: 'again' }).catch((e: unknown) => e);
    expect(after).toBeInstanceOf(LiveError);
    expect((after as LiveError).code).toBe('session_failed');
    expect(((after as LiveError).cause as { code?: string }).code).toBe('journal_unlinked');
    expect(await waiting).toEqual({ done: true, value: undefined });
    // hub.session() hands out a reopened session, on journals created afresh: it knows nothing of r1.
    const reopened = await hub.session('s1');
    expect(reopened).not.toBe(session);
    expect(reopened.statusOf('r1')).toBeUndefined();
    expect(reopened.durableSeq).toBe(-1);
    const next = await reopened.send({ requestId: 'r2', content: 'again' });
    if (!next.created) throw new Error('expected a new run');
    await next.run.done();
    await hub.close();
    expect(
      logLines(join(root, 's1', 'events.jsonl'))
        .map((r) => r.type)
        .filter((t) => t !== 'checkpoint'),
    ).toEqual(['chat.started', 'message_append', 'chat.done']);
  });

  it('fails the session when its turn journal alone was removed, at the next send', async () => {
    const { root, hub, session } = await finishedRun();
    unlinkSync(join(root, '_turn_journal', 's1.jsonl'));
    await expect(session.send({ requestId: 'r2', content: 'again' })).rejects.toMatchObject({
      code: 'session_failed',
      cause: { code: 'journal_unlinked' },
    });
    expect(session.retired).toBe(true);
    // Reopened: the event log still holds r1 (a retry is answered from it), the turn journal is new.
    const reopened = await hub.session('s1');
    expect(reopened).not.toBe(session);
    expect(reopened.statusOf('r1')).toBe('done');
    const next = await reopened.send({ requestId: 'r2', content: 'again' });
    expect(next.created).toBe(true);
    await hub.close();
  });

  it('refuses an ack whose record cannot be made durable, and the session fails', async () => {
    const { root, hub, session } = await finishedRun();
    unlinkSync(join(root, 's1', 'events.jsonl'));
    await expect(session.ack('r1', { clientId: 'c1' })).rejects.toMatchObject({
      code: 'session_failed',
      cause: { code: 'journal_unlinked' },
    });
    expect(session.retired).toBe(true);
    await hub.close();
  });

  it('fails the session when a sync of its turn journal failed, so hub.session() reopens it (TJ-DUR-021)', async () => {
    // Before, the turn journal refused every later send (writer_poisoned) while hub.session() kept handing out the
    // session: no send could succeed until the process restarted.
    const sim = new SimulatedFileSystem();
    const dead = {
      statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)),
    };
    const hub = openConversationHub({ root: '/s', fs: sim, lock: dead, retention: false });
    const session = await hub.session('s1');
    sim.inject({ op: 'fdatasync', path: '_turn_journal/s1.jsonl', errno: 'EIO' });
    await expect(session.send({ requestId: 'r1', content: 'hello' })).rejects.toThrow(/EIO/);
    expect(session.retired).toBe(true);
    const reopened = await hub.session('s1');
    expect(reopened).not.toBe(session);
    const sent = await reopened.send({ requestId: 'r2', content: 'again' });
    expect(sent.created).toBe(true);
    await hub.close();
  });
});
