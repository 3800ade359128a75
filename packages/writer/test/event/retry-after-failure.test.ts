// After a failed fdatasync the event log cannot know what reached stable storage (TJ-DUR-021): every later call is
// refused with `writer_poisoned`, the calls queued behind the failing one are never answered as written (by their
// promise or by the log's snapshot), nothing hangs, and a reopen goes on from what the file holds. The same cases as
// test/turn/retry-after-failure.test.ts, for EventLog.
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { allWithin, outcomeOf } from '@turnjournal/test-support';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { type EventLog, nodeFileSystem, openEventLog } from '../support/internals.js';
import { tempDir } from '../support/temp.js';
import { seqsOf, seriousFindings } from './support.js';

const msg = (content: string) => ({ role: 'user', content });

/**
 * A log in a fresh directory holding `m0` (and a running `r1` when `running`), whose next fdatasync fails with EIO.
 */
async function logFailingNextSync(running = false) {
  const file = join(tempDir(), 'events.jsonl');
  const fs = faultyFileSystem(nodeFileSystem);
  const log = await openEventLog({ file, fs });
  await log.appendMessage(msg('m0'));
  if (running) await log.chatStarted({ requestId: 'r1' });
  fs.inject({ op: 'fdatasync', path: file, errno: 'EIO' });
  return { file, fs, log };
}

/** Every kind of call an EventLog appends with, each refused once the log is poisoned. */
function everyCall(log: EventLog): Record<string, () => Promise<unknown>> {
  const requestId = 'r1';
  return {
    appendMessage: () => log.appendMessage(msg('after')),
    editMessage: () => log.editMessage(0, msg('edited')),
    replaceMessages: () => log.replaceMessages([msg('only')]),
    undo: () => log.undo(1),
    chatStarted: () => log.chatStarted({ requestId: 'r2' }),
    segmentStarted: () => log.segmentStarted({ requestId, messageId: 'a1' }),
    delta: () => log.delta({ requestId, messageId: 'a1', text: 'x' }),
    toolStart: () => log.toolStart({ requestId, toolCallId: 'c1', tool: 'search' }),
    toolEnd: () => log.toolEnd({ requestId, toolCallId: 'c1' }),
    toolResult: () => log.toolResult({ requestId, toolCallId: 'c1', output: 'found' }),
    chatDone: () => log.chatDone({ requestId }),
    chatError: () => log.chatError({ requestId, error: { message: 'boom' } }),
    chatCancelled: () => log.chatCancelled({ requestId }),
    ack: () => log.ack(requestId),
    append: () => log.append('x.acme.note', { text: 'n' }),
    checkpoint: () => log.checkpoint(),
    compact: () => log.compact(),
  };
}

describe('EventLog: calls after a failed sync (TJ-DUR-021, TJ-DUR-030)', () => {
  it('refuses the calls queued behind a failing sync, answers none of them, and keeps none of them (bug found)', async () => {
    const { log } = await logFailingNextSync();
    const outcomes = await allWithin([
      outcomeOf(log.appendMessage(msg('m1'))),
      outcomeOf(log.appendMessage(msg('m2'))),
      outcomeOf(log.chatStarted({ requestId: 'r1' })),
    ]);
    expect(outcomes).toEqual(['rejected: write_failed', 'rejected: writer_poisoned', 'rejected: writer_poisoned']);
    // The snapshot held m2 and a running r1, records the file refused and never holds; now it holds what was
    // acknowledged.
    const snapshot = log.snapshot();
    expect(snapshot.messages).toEqual([msg('m0')]);
    expect(snapshot.activeRun).toBeNull();
    expect(log.lastSeq).toBe(0);
    await log.close();
  });

  it('refuses every kind of call with writer_poisoned, the retry of the failed one included', async () => {
    const { log } = await logFailingNextSync(true);
    expect(await outcomeOf(log.appendMessage(msg('m1')))).toBe('rejected: write_failed');
    expect(await outcomeOf(log.appendMessage(msg('m1')))).toBe('rejected: writer_poisoned');
    const calls = everyCall(log);
    const outcomes = await allWithin(Object.values(calls).map((call) => outcomeOf(call())));
    expect(outcomes).toEqual(Object.keys(calls).map(() => 'rejected: writer_poisoned'));
    expect(await outcomeOf(log.cancelUnfinishedRuns())).toBe('rejected: writer_poisoned');
    await log.close();
  });

  it('reopens on what the file holds after a failed sync, and numbers on from it', async () => {
    const { file, fs, log } = await logFailingNextSync();
    const outcomes = await allWithin([
      outcomeOf(log.appendMessage(msg('m1'))),
      outcomeOf(log.appendMessage(msg('m2'))),
    ]);
    expect(outcomes).toEqual(['rejected: write_failed', 'rejected: writer_poisoned']);
    await log.close();
    // The unsynced m1 reached the page cache here and may be in the file; m2 was never written.
    const held = seqsOf(file);
    expect([[0], [0, 1]]).toContainEqual(held);
    const reopened = await openEventLog({ file, fs });
    expect(reopened.lastSeq).toBe(held.length - 1);
    expect(reopened.snapshot().messages).toEqual([msg('m0'), msg('m1')].slice(0, held.length));
    expect((await reopened.appendMessage(msg('m3'))).seq).toBe(held.length);
    await reopened.close();
    expect(seriousFindings(await checkStore([file]))).toEqual([]);
  });
});
