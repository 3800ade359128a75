import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFileSystem, SYNC_WRITE_MAX_BYTES } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

// The real file system makes small writes and metadata calls synchronously: callers must not be able to tell, so
// results arrive as promises and failures reject with the errno error instead of throwing.
describe('nodeFileSystem: synchronous calls keep the asynchronous contract', () => {
  it('writes at the given positions awaited or not, small or large', async () => {
    const path = join(tempDir(), 'f');
    const fd = await nodeFileSystem.open(path, 'create-exclusive');
    const small = Buffer.from('small line\n');
    const large = Buffer.alloc(SYNC_WRITE_MAX_BYTES + 1, 0x61);
    const parts: Buffer[] = [];
    let position = 0;
    for (const options of [{ awaited: true }, undefined])
      for (const bytes of [small, large]) {
        const written = nodeFileSystem.write(fd, bytes, 0, bytes.length, position, options);
        expect(written).toBeInstanceOf(Promise);
        expect(await written).toBe(bytes.length);
        parts.push(bytes);
        position += bytes.length;
      }
    expect((await nodeFileSystem.fstat(fd)).size).toBe(position);
    await nodeFileSystem.close(fd);
    expect(readFileSync(path).equals(Buffer.concat(parts))).toBe(true);
  });

  it('rejects, never throws, with the errno error of a failing write, fstat or stat', async () => {
    const badFd = 2 ** 30;
    let pending: Promise<number> | undefined;
    expect(() => {
      pending = nodeFileSystem.write(badFd, Buffer.from('x'), 0, 1, 0, { awaited: true });
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
    // File times come from a coarse kernel clock: wait until it has moved past `before`, as observed on a probe
    // directory of the same file system (not a guessed sleep), so the entry below is stamped later than `before`.
    const probe = tempDir();
    for (let i = 0; ((await nodeFileSystem.stat(probe)).ctimeMs as number) <= (before.ctimeMs as number); i++) {
      const probeFd = await nodeFileSystem.open(join(probe, `tick-${i}`), 'create-exclusive');
      await nodeFileSystem.close(probeFd);
    }
    const fd = await nodeFileSystem.open(join(dir, 'new'), 'create-exclusive');
    await nodeFileSystem.close(fd);
    expect((await nodeFileSystem.stat(dir)).ctimeMs).toBeGreaterThan(before.ctimeMs as number);
  });
});
