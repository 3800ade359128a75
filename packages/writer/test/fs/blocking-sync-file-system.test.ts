import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { syncSchedulerCounts } from '../../src/fs/sync-scheduler.js';
import { blockingSyncFileSystem, openTurnJournal } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

// Issue 14: the opt-in file system whose syncs run on the calling thread (as better-sqlite3 commits). It must keep
// the writer's contract: every acknowledged record written and synced, failures rejected with the errno error.
describe('blockingSyncFileSystem', () => {
  it('syncs on the calling thread: durable submits succeed and no sync goes to the pool or a worker', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's', durability: 'every', fs: blockingSyncFileSystem });
    const before = syncSchedulerCounts();
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) ids.push((await journal.submit({ content: `m${i}` })).turnId);
    const after = syncSchedulerCounts();
    await journal.close();
    expect(after.libuv - before.libuv).toBe(0);
    expect(after.worker - before.worker).toBe(0);
    const written = readFileSync(join(dir, `${'s'}.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).turn_id);
    expect(written).toEqual(ids);
  });

  it('rejects, never throws, with the errno error of a failing sync', async () => {
    const badFd = 2 ** 30;
    let pending: Promise<void> | undefined;
    expect(() => {
      pending = blockingSyncFileSystem.fdatasync(badFd);
    }).not.toThrow();
    await expect(pending).rejects.toMatchObject({ code: 'EBADF' });
    await expect(blockingSyncFileSystem.fsync(badFd)).rejects.toMatchObject({ code: 'EBADF' });
  });
});
