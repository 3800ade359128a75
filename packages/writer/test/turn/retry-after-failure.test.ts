import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { nodeFileSystem, openTurnJournal } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

/** How one submit ended: `created` for an answer, the error's code for a rejection. */
const ended = (promise: Promise<{ created: boolean }>): Promise<string> =>
  promise.then(
    (result) => `created: ${result.created}`,
    (error: { code?: string }) => `rejected: ${error.code}`,
  );

describe('retries of a submission that failed (TJ-TURN-003, TJ-DUR-021, TJ-DUR-030)', () => {
  it('a retry overlapping a submission whose write fails waits for the re-read, then writes the record', async () => {
    // It used to hang for ever: the retry waited for the first submission while holding the appender, and the first
    // one's rejection waits for the appender's re-read of the file after the failed write.
    const fs = faultyFileSystem(nodeFileSystem);
    const journal = await openTurnJournal({ dir: tempDir(), sessionId: 'chain', fs });
    fs.inject({ op: 'write', path: 'chain.jsonl', errno: 'EIO' });
    const first = ended(journal.submit({ content: 'once', turnId: 'same' }));
    const retry = ended(journal.submit({ content: 'once', turnId: 'same' }));
    const timeout = new Promise<string>((resolve) =>
      setTimeout(() => resolve('still waiting after 3 s'), 3000).unref(),
    );
    expect(await Promise.race([Promise.all([first, retry]).then((both) => both.join(' / ')), timeout])).toBe(
      'rejected: write_failed / created: true',
    );
    expect(journal.stateOf('same')).toBe('submitted');
    await journal.close();
  });

  it('a retry of a submission whose sync failed is refused, not answered "already submitted"', async () => {
    // The failed submission's turn stayed in the writer's table and the retry wrote nothing, so it answered
    // `created: false` for a record that was never acknowledged.
    const fs = faultyFileSystem(nodeFileSystem);
    const journal = await openTurnJournal({ dir: tempDir(), sessionId: 'chain', fs });
    fs.inject({ op: 'fdatasync', path: 'chain.jsonl', errno: 'EIO' });
    expect(await ended(journal.submit({ content: 'once', turnId: 'same' }))).toBe('rejected: write_failed');
    expect(await ended(journal.submit({ content: 'once', turnId: 'same' }))).toBe('rejected: writer_poisoned');
    await journal.close();
  });

  it('keeps no state of the calls queued behind a failing sync: stateOf answers what the file holds (bug found)', async () => {
    // The queued calls were refused, but their reservations stayed: stateOf said `worker_started` and `submitted` for
    // records that were never written.
    const fs = faultyFileSystem(nodeFileSystem);
    const journal = await openTurnJournal({ dir: tempDir(), sessionId: 'queued', fs });
    await journal.submit({ content: 'kept', turnId: 't0' });
    fs.inject({ op: 'fdatasync', path: 'queued.jsonl', errno: 'EIO' });
    const outcomes = Promise.all([
      ended(journal.submit({ content: 'unsure', turnId: 't1' })),
      journal.workerStarted('t1').then(
        () => 'ok',
        (error: { code?: string }) => `rejected: ${error.code}`,
      ),
      ended(journal.submit({ content: 'never written', turnId: 't2' })),
    ]).then((all) => all.join(' / '));
    const timeout = new Promise<string>((resolve) =>
      setTimeout(() => resolve('still waiting after 3 s'), 3000).unref(),
    );
    expect(await Promise.race([outcomes, timeout])).toBe(
      'rejected: write_failed / rejected: writer_poisoned / rejected: writer_poisoned',
    );
    expect(journal.stateOf('t0')).toBe('submitted');
    expect(journal.stateOf('t1')).not.toBe('worker_started');
    expect(journal.stateOf('t2')).toBeUndefined();
    await journal.close();
  });
});
