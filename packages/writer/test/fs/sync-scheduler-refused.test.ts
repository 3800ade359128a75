import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';

// The sync scheduler starts worker threads from an inline script. A runtime may refuse to start a worker thread (an
// embedder or sandbox without worker support, a resource limit): then every sync must still complete, on libuv's pool
// alone. The child replaces `Worker` by a constructor that throws, as such a runtime's does, before it loads the built
// module. (Node's permission model is not such a runtime: in Node 20 it disables fsync/fdatasync themselves.)
const built = join(import.meta.dirname, '../../dist/fs/sync-scheduler.js');

describe('the sync scheduler where worker threads are refused', () => {
  it('completes 64 concurrent syncs on libuv alone, none lost or failed', () => {
    // The child loads the built module (vitest's global setup builds it): without it the test fails, never skips.
    if (!existsSync(built)) throw new Error(`${built} is missing: build first (npx pnpm@10.34.8 run build)`);
    const dir = tempDir();
    const script = `
      import { openSync, writeSync, closeSync } from 'node:fs';
      import { createRequire, syncBuiltinESMExports } from 'node:module';
      const workerThreads = createRequire(import.meta.url)('node:worker_threads');
      workerThreads.Worker = class { constructor() { throw new Error('worker threads are not available here'); } };
      syncBuiltinESMExports();
      const { parallelFdatasync, parallelFsync, syncSchedulerCounts } = await import(${JSON.stringify(pathToFileURL(built).href)});
      const fds = Array.from({ length: 64 }, (_, i) => openSync(${JSON.stringify(dir)} + '/f' + i, 'a'));
      for (const fd of fds) writeSync(fd, 'line\\n');
      const results = await Promise.allSettled(fds.map((fd, i) => (i % 2 ? parallelFsync(fd) : parallelFdatasync(fd))));
      for (const fd of fds) closeSync(fd);
      process.stdout.write(JSON.stringify({ fulfilled: results.filter((r) => r.status === 'fulfilled').length, ...syncSchedulerCounts() }));
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const counts = JSON.parse(child.stdout) as {
      fulfilled: number;
      libuv: number;
      worker: number;
      peakInFlight: number;
    };
    expect(counts.fulfilled).toBe(64);
    // Every sync ran on libuv's pool; none on a worker, since none could start, and more than 4 were waiting at once.
    expect(counts).toMatchObject({ libuv: 64, worker: 0 });
    expect(counts.peakInFlight).toBeGreaterThan(4);
  });
});
