// A live session over an event log whose fdatasync fails (TJ-DUR-021): the calls made while the sync fails, or
// after, are refused and never answered as written (by their promise or by the session's snapshot), nothing hangs,
// and a reopen recovers from what the file holds. The writer-level cases are in the writer's
// test/{turn,run,event}/retry-after-failure.test.ts.
import { SimulatedFileSystem } from '@turnjournal/conformance';
import { openConversationHub } from '@turnjournal/live';
import { allWithin, outcomeOf } from '@turnjournal/test-support';
import { describe, expect, it } from 'vitest';

const DEAD = { statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)) };

describe('live session: calls after a failed sync of its event log (TJ-DUR-021)', () => {
  it('refuses what overlaps the failing sync and everything after, answers none of it, and a reopen recovers', async () => {
    const sim = new SimulatedFileSystem();
    const hub = openConversationHub({ root: '/s', fs: sim, lock: DEAD, retention: false, deltaFlushMs: 60_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    const messagesBefore = session.snapshot().messages;
    sim.inject({ op: 'fdatasync', path: 'events.jsonl', errno: 'EIO' });
    // A tool call (durable), its result and the run's end, made together while the first one's sync fails.
    const outcomes = await allWithin([
      outcomeOf(sent.run.toolStart({ toolCallId: 'c1', tool: 'search' })),
      outcomeOf(sent.run.toolResult({ toolCallId: 'c1', output: 'found' })),
      outcomeOf(sent.run.done()),
    ]);
    expect(Array.isArray(outcomes), String(outcomes)).toBe(true);
    for (const outcome of outcomes as string[]) expect(outcome).toMatch(/^rejected: /);
    // Nothing of them is in the session's view: the tool result and the end were never acknowledged.
    expect(session.snapshot().messages).toEqual(messagesBefore);
    // Everything after is refused, the retry of the failed call included.
    const after = await allWithin([
      outcomeOf(sent.run.toolStart({ toolCallId: 'c1', tool: 'search' })),
      outcomeOf(sent.run.delta('more')),
      outcomeOf(session.send({ requestId: 'r2', content: 'again' })),
      outcomeOf(session.flush()),
    ]);
    expect(Array.isArray(after), String(after)).toBe(true);
    for (const outcome of after as string[]) expect(outcome).toMatch(/^rejected: (session_failed|writer_poisoned)$/);
    await hub.close();

    const reopened = openConversationHub({ root: '/s', fs: sim, lock: DEAD, retention: false });
    const restarted = await reopened.session('s1');
    // What the file holds decides: the three records were written in one batch before its sync failed, so they may be
    // there (the run is then done) or not (recovery cancels the run). The acknowledged user message is there.
    expect(['done', 'cancelled']).toContain(restarted.statusOf('r1'));
    expect(restarted.snapshot().messages.slice(0, messagesBefore.length)).toEqual(messagesBefore);
    await reopened.close();
  });
});
