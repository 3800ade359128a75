import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { syncSchedulerCounts } from '../../src/fs/sync-scheduler.js';
import { AppendFile, nodeFileSystem } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

// Issue 14: syncs beyond the 4 that libuv's pool runs at once go to worker threads, so 64 sessions syncing together
// are not queued behind 4 threads. Each promise must still settle with its own system call's outcome.
describe('the sync scheduler of the real file system', () => {
  it('runs more than libuv-pool-size syncs at once, on worker threads, and resolves every one', async () => {
    const dir = tempDir();
    const fds = Array.from({ length: 64 }, (_, i) => openSync(join(dir, `f${i}`), 'a'));
    try {
      for (const fd of fds) writeSync(fd, 'line\n');
      const before = syncSchedulerCounts();
      const results = await Promise.allSettled(
        fds.map((fd, i) => (i % 2 === 0 ? nodeFileSystem.fdatasync(fd) : nodeFileSystem.fsync(fd))),
      );
      expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
      const after = syncSchedulerCounts();
      expect(after.libuv - before.libuv + (after.worker - before.worker)).toBe(64);
      expect(after.worker - before.worker).toBeGreaterThan(0);
      expect(after.peakInFlight).toBeGreaterThan(4);
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  });

  it('rejects each failing sync with its errno error, on libuv and on a worker alike', async () => {
    const dir = tempDir();
    const good = Array.from({ length: 16 }, (_, i) => openSync(join(dir, `g${i}`), 'a'));
    const closed = openSync(join(dir, 'closed'), 'a');
    closeSync(closed);
    try {
      const before = syncSchedulerCounts();
      // Good and bad interleaved, more than libuv's 4 slots: some bad ones run on a worker thread.
      const calls = good.flatMap((fd) => [nodeFileSystem.fdatasync(fd), nodeFileSystem.fsync(closed)]);
      const results = await Promise.allSettled(calls);
      expect(syncSchedulerCounts().worker - before.worker).toBeGreaterThan(0);
      results.forEach((result, i) => {
        if (i % 2 === 0) expect(result.status).toBe('fulfilled');
        else {
          expect(result.status).toBe('rejected');
          const error = (result as PromiseRejectedResult).reason as NodeJS.ErrnoException;
          expect(error).toBeInstanceOf(Error);
          expect(error.code).toBe('EBADF');
          expect(error.syscall).toBe('fsync');
        }
      });
    } finally {
      for (const fd of good) closeSync(fd);
    }
  });

  it('acknowledges appends of 64 files in every mode with their bytes in place', async () => {
    const dir = tempDir();
    const files = await Promise.all(
      Array.from({ length: 64 }, (_, i) => AppendFile.open(join(dir, `s${i}.jsonl`), { durability: 'every' })),
    );
    try {
      await Promise.all(
        files.map(async (file, i) => {
          for (let n = 0; n < 3; n += 1) await file.appendRecord({ session: i, n });
        }),
      );
    } finally {
      await Promise.all(files.map((file) => file.close()));
    }
    for (let i = 0; i < 64; i += 1)
      expect(readFileSync(join(dir, `s${i}.jsonl`), 'utf8')).toBe(
        [0, 1, 2].map((n) => `${JSON.stringify({ session: i, n })}\n`).join(''),
      );
  });
});
