import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFileSystem, SYNC_WRITE_MAX_BYTES } from '../../src/index.js';
import { tempDir } from '../support/temp.js';

// The real file system makes small writes and metadata calls synchronously: callers must not be able to tell, so
// results arrive as promises and failures reject with the errno error instead of throwing.
describe('nodeFileSystem: synchronous calls keep the asynchronous contract', () => {
  it('writes small and large buffers at their positions, short-write counts included', async () => {
    const path = join(tempDir(), 'f');
    const fd = await nodeFileSystem.open(path, 'create-exclusive');
    const small = Buffer.from('small line\n');
    const large = Buffer.alloc(SYNC_WRITE_MAX_BYTES + 1, 0x61);
    const first = nodeFileSystem.write(fd, small, 0, small.length, 0);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe(small.length);
    expect(await nodeFileSystem.write(fd, large, 0, large.length, small.length)).toBe(large.length);
    expect((await nodeFileSystem.fstat(fd)).size).toBe(small.length + large.length);
    await nodeFileSystem.close(fd);
    expect(readFileSync(path).equals(Buffer.concat([small, large]))).toBe(true);
  });

  it('rejects, never throws, with the errno error of a failing write, fstat or stat', async () => {
    const badFd = 2 ** 30;
    let pending: Promise<number> | undefined;
    expect(() => {
      pending = nodeFileSystem.write(badFd, Buffer.from('x'), 0, 1, 0);
    }).not.toThrow();
    await expect(pending).rejects.toMatchObject({ code: 'EBADF' });
    await expect(nodeFileSystem.fstat(badFd)).rejects.toMatchObject({ code: 'EBADF' });
    await expect(nodeFileSystem.stat(join(tempDir(), 'absent'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reports a change time for directories, which moves when an entry is added', async () => {
    const dir = tempDir();
    const before = await nodeFileSystem.stat(dir);
    expect(before.isDirectory).toBe(true);
    expect(typeof before.ctimeMs).toBe('number');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const fd = await nodeFileSystem.open(join(dir, 'new'), 'create-exclusive');
    await nodeFileSystem.close(fd);
    expect((await nodeFileSystem.stat(dir)).ctimeMs).toBeGreaterThan(before.ctimeMs as number);
  });
});
