import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { type FileSystem, nodeFileSystem, openTurnJournal } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

function submittedLine(sessionId: string, turnId: string, content: string): string {
  return `${JSON.stringify({ version: 1, event: 'submitted', turn_id: turnId, session_id: sessionId, created_at: 1, role: 'user', content })}\n`;
}

/** A promise and the function that resolves it. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * `base`, plus `onRead` told the path and result of every `read` (the faulty file system's `before` hook sees calls,
 * not their results): lets the test act once the writer's re-read of its own file reached the file's end.
 */
function observingReads(base: FileSystem, onRead: (path: string, bytes: number) => void): FileSystem {
  const paths = new Map<number, string>();
  return {
    ...base,
    async open(path, mode) {
      const fd = await base.open(path, mode);
      paths.set(fd, path);
      return fd;
    },
    async read(fd, buffer, offset, length, position) {
      const bytes = await base.read(fd, buffer, offset, length, position);
      onRead(paths.get(fd) ?? '?', bytes);
      return bytes;
    },
  };
}

/**
 * After a failed write the turn journal re-reads the session from its files (TJ-DUR-030): a fresh table, every other
 * shard read again from its start. A `refreshSiblings()` the application started before the failure, still reading a
 * shard when the re-read began, must not leave its end position in the fresh state: the re-read would then take the
 * shard as read and the writer would lose every turn in it.
 */
describe('a refresh of the other shards overlapping the re-read after a failed write (TJ-DUR-030, TJ-TURN-012)', () => {
  it('leaves the re-read complete: the turns of the other shard stay known', async () => {
    const dir = tempDir();
    const sibling = join(dir, 'race~b.jsonl');
    appendFileSync(sibling, submittedLine('race', 'tb', 'from b'));
    const faulty = faultyFileSystem(nodeFileSystem);
    let failed = false;
    const ownEndAfterFailure = signal();
    const fs = observingReads(faulty, (path, bytes) => {
      if (failed && path.endsWith('race~a.jsonl') && bytes === 0) ownEndAfterFailure.resolve();
    });
    const journal = await openTurnJournal({ dir, sessionId: 'race', shard: 'a', fs });
    expect(journal.stateOf('tb')).toBe('submitted');

    // The other shard grows, so the application's refresh has something to read.
    appendFileSync(sibling, submittedLine('race', 'tb2', 'from b, later'));
    const refreshAtShard = signal();
    const refreshSettled = signal();
    let refresh: Promise<void> | undefined;
    let refreshHeld = false;
    faulty.before = async (op, path) => {
      // The refresh, reading the grown shard, waits until the failed write's re-read has read the journal's own file.
      if (op === 'read' && path === sibling && refresh !== undefined && !refreshHeld) {
        refreshHeld = true;
        refreshAtShard.resolve();
        await ownEndAfterFailure.promise;
      }
      // The re-read, listing the other shards, waits until the refresh has ended (whatever order a fix imposes, it
      // has ended by then).
      if (op === 'stat' && path === dir && failed) await refreshSettled.promise;
    };
    faulty.inject({
      op: 'write',
      path: journal.path,
      errno: 'ENOSPC',
      // While the submission's write is in flight, the application refreshes; the write fails once the refresh is
      // reading the other shard.
      before: async () => {
        refresh = journal.refreshSiblings();
        refresh.then(refreshSettled.resolve, refreshSettled.resolve);
        await refreshAtShard.promise;
        failed = true;
      },
    });
    // The disk is still full when the writer tries the line without the pre-allocated space after it (spec §11.6).
    faulty.inject({ op: 'write', path: journal.path, errno: 'ENOSPC', nth: 2 });
    await expect(journal.submit({ content: 'lost to ENOSPC' })).rejects.toMatchObject({
      code: 'write_failed',
      errno: 'ENOSPC',
    });
    await refresh;
    faulty.before = undefined;

    // The re-read read the other shard whole: both of its turns are known, and a worker can advance them.
    expect(journal.stateOf('tb')).toBe('submitted');
    expect(journal.stateOf('tb2')).toBe('submitted');
    await journal.refreshSiblings();
    expect(journal.stateOf('tb2')).toBe('submitted');
    await expect(journal.workerStarted('tb2')).resolves.toMatchObject({ cursor: 0 });
    // A retry of a turn the other shard holds is recognised, not written a second time.
    await expect(journal.submit({ turnId: 'tb', content: 'from b' })).resolves.toMatchObject({ created: false });
    await journal.close();
  });

  it('runs one read at a time, and a refresh called during a read sees what was appended before the call', async () => {
    const dir = tempDir();
    const sibling = join(dir, 'seq~b.jsonl');
    appendFileSync(sibling, submittedLine('seq', 'first', 'one'));
    const fs = faultyFileSystem(nodeFileSystem);
    const journal = await openTurnJournal({ dir, sessionId: 'seq', shard: 'a', fs });
    appendFileSync(sibling, submittedLine('seq', 'second', 'two'));
    let open = 0;
    let mostOpen = 0;
    const firstAtShard = signal();
    const release = signal();
    let held = false;
    fs.before = async (op, path) => {
      if (path !== sibling) return;
      if (op === 'open') mostOpen = Math.max(mostOpen, ++open);
      if (op === 'close') open -= 1;
      if (op === 'read' && !held) {
        held = true;
        firstAtShard.resolve();
        await release.promise;
      }
    };
    const first = journal.refreshSiblings();
    await firstAtShard.promise;
    // Appended after the first refresh passed the shard's size: only a later read can see it.
    appendFileSync(sibling, submittedLine('seq', 'third', 'three'));
    const second = journal.refreshSiblings();
    const third = journal.refreshSiblings();
    release.resolve();
    await Promise.all([first, second, third]);
    fs.before = undefined;
    expect(mostOpen).toBe(1);
    expect(journal.stateOf('second')).toBe('submitted');
    expect(journal.stateOf('third')).toBe('submitted');
    await journal.close();
  });
});
