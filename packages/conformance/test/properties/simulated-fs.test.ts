// The simulated file system is the contract writers are crash-tested against (TJ-CONF-009, TJ-DUR-024): these tests
// pin its model down — what a sync makes durable, what a crash may lose, tear, reorder or undo — and its errno codes.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedCrashError, SimulatedFileSystem, seededRandom } from '../../src/simulated-fs/index.js';
import { checkProperty } from './support.js';

const enc = (text: string) => new TextEncoder().encode(text);
const dec = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

async function writeText(sim: SimulatedFileSystem, fd: number, text: string, position: number) {
  const bytes = enc(text);
  return sim.write(fd, bytes, 0, bytes.length, position);
}

async function createSynced(sim: SimulatedFileSystem, path: string, text: string): Promise<number> {
  const fd = await sim.open(path, 'create-exclusive');
  await writeText(sim, fd, text, 0);
  await sim.fsync(fd);
  await sim.fsyncDirectory('/');
  return fd;
}

/** Outcomes of `scenario` over `n` seeds (each on a fresh simulator). */
async function outcomes(
  n: number,
  scenario: (sim: SimulatedFileSystem) => Promise<void>,
  observe: (sim: SimulatedFileSystem) => string,
) {
  const seen = new Set<string>();
  for (let seed = 1; seed <= n; seed++) {
    const sim = new SimulatedFileSystem();
    await scenario(sim);
    sim.crash(seededRandom(seed));
    seen.add(observe(sim));
  }
  return seen;
}

const temporary: string[] = [];
afterEach(() => {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('SimulatedFileSystem durability model (TJ-CONF-009)', () => {
  it('synced data always survives a crash, whatever happens after the sync (TJ-DUR-024)', async () => {
    await checkProperty(
      'simulated-fs: synced data survives (TJ-DUR-024)',
      fc.asyncProperty(
        fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.oneof(fc.constant('sync' as const), fc.string({ minLength: 1, maxLength: 8 })), { maxLength: 6 }),
        fc.integer({ min: 0, max: 0x7fffffff }),
        async (synced, after, seed) => {
          const sim = new SimulatedFileSystem();
          const fd = await sim.open('/f', 'create-exclusive');
          await sim.fsyncDirectory('/');
          let size = 0;
          for (const text of synced) size += await writeText(sim, fd, text, size);
          await sim.fdatasync(fd);
          let durable = synced.join('');
          for (const step of after) {
            if (step === 'sync') {
              await sim.fdatasync(fd);
              durable = dec(sim.peek('/f')) ?? '';
            } else size += await writeText(sim, fd, step, size);
          }
          sim.crash(seededRandom(seed));
          const image = dec(sim.peek('/f'));
          expect(image?.startsWith(durable)).toBe(true);
        },
      ),
      { defaultRuns: 200 },
    );
  });

  it('unsynced writes may vanish, survive whole, survive as a prefix, or come back as NUL bytes', async () => {
    const seen = await outcomes(
      64,
      async (sim) => {
        const fd = await createSynced(sim, '/f', 'durable\n');
        await writeText(sim, fd, 'unsynced\n', 8);
      },
      (sim) => {
        const text = dec(sim.peek('/f')) ?? '';
        expect(text.startsWith('durable\n')).toBe(true);
        const tail = text.slice(8);
        if (tail === '') return 'vanished';
        if (tail === 'unsynced\n') return 'kept';
        if (/^\0+$/.test(tail)) return 'zeroed';
        expect('unsynced\n'.startsWith(tail)).toBe(true);
        return 'prefix';
      },
    );
    expect([...seen].sort()).toEqual(['kept', 'prefix', 'vanished', 'zeroed']);
  });

  it('unsynced writes survive as an arbitrary subset: a later write may survive when an earlier one does not', async () => {
    const seen = await outcomes(
      64,
      async (sim) => {
        const fd = await createSynced(sim, '/f', '');
        await writeText(sim, fd, 'aaaa', 0);
        await writeText(sim, fd, 'bbbb', 4);
      },
      (sim) => dec(sim.peek('/f')) ?? '',
    );
    expect(seen.has('\0\0\0\0bbbb')).toBe(true);
    expect(seen.has('aaaa')).toBe(true);
    expect(seen.has('')).toBe(true);
  });

  it('a file created without a directory fsync may vanish; with one it never does (TJ-DUR-007)', async () => {
    const unsynced = await outcomes(
      32,
      async (sim) => {
        const fd = await sim.open('/new', 'create-exclusive');
        await writeText(sim, fd, 'x\n', 0);
        await sim.fsync(fd);
      },
      (sim) => (sim.peek('/new') === undefined ? 'vanished' : 'kept'),
    );
    expect([...unsynced].sort()).toEqual(['kept', 'vanished']);
    const synced = await outcomes(
      32,
      async (sim) => {
        await createSynced(sim, '/new', 'x\n');
      },
      (sim) => dec(sim.peek('/new')) ?? 'vanished',
    );
    expect([...synced]).toEqual(['x\n']);
  });

  it('a file in a new directory vanishes with the directory unless the parent was fsynced (TJ-DUR-008)', async () => {
    const seen = await outcomes(
      32,
      async (sim) => {
        await sim.mkdir('/d');
        const fd = await sim.open('/d/f', 'create-exclusive');
        await sim.fsync(fd);
        await sim.fsyncDirectory('/d');
      },
      (sim) => (sim.peek('/d/f') === undefined ? 'vanished' : 'kept'),
    );
    expect([...seen].sort()).toEqual(['kept', 'vanished']);
  });

  it('a rename without a directory fsync may be undone, as a whole; with one it sticks (TJ-DUR-009)', async () => {
    const scenario = (syncDir: boolean) => async (sim: SimulatedFileSystem) => {
      await createSynced(sim, '/target', 'old');
      await createSynced(sim, '/tmp', 'new');
      await sim.rename('/tmp', '/target');
      if (syncDir) await sim.fsyncDirectory('/');
    };
    const observe = (sim: SimulatedFileSystem) => `${dec(sim.peek('/target'))}|${dec(sim.peek('/tmp')) ?? '-'}`;
    expect([...(await outcomes(32, scenario(false), observe))].sort()).toEqual(['new|-', 'old|new']);
    expect([...(await outcomes(32, scenario(true), observe))]).toEqual(['new|-']);
  });

  it('an unlink without a directory fsync may be undone', async () => {
    const seen = await outcomes(
      32,
      async (sim) => {
        await createSynced(sim, '/f', 'x');
        await sim.unlink('/f');
      },
      (sim) => dec(sim.peek('/f')) ?? 'gone',
    );
    expect([...seen].sort()).toEqual(['gone', 'x']);
  });

  it('an unsynced truncation may be undone; a synced one never is', async () => {
    const seen = await outcomes(
      32,
      async (sim) => {
        const fd = await createSynced(sim, '/f', 'line\ntorn');
        await sim.ftruncate(fd, 5);
      },
      (sim) => dec(sim.peek('/f')) ?? '',
    );
    expect([...seen].sort()).toEqual(['line\n', 'line\ntorn']);
    const synced = await outcomes(
      16,
      async (sim) => {
        const fd = await createSynced(sim, '/f', 'line\ntorn');
        await sim.ftruncate(fd, 5);
        await sim.fsync(fd);
      },
      (sim) => dec(sim.peek('/f')) ?? '',
    );
    expect([...synced]).toEqual(['line\n']);
  });

  it('the same seed gives the same crash image', async () => {
    const image = async () => {
      const sim = new SimulatedFileSystem();
      const fd = await createSynced(sim, '/f', 'a\n');
      for (let i = 0; i < 5; i++) await writeText(sim, fd, `${i}-record\n`, 2 + i * 9);
      const report = sim.crash(seededRandom(7));
      return { text: dec(sim.peek('/f')), report };
    };
    expect(await image()).toEqual(await image());
  });
});

describe('SimulatedFileSystem descriptors, views and errors', () => {
  it('every descriptor is invalid after a crash (EBADF) and the FS goes on from the image', async () => {
    const sim = new SimulatedFileSystem();
    const fd = await createSynced(sim, '/f', 'kept\n');
    sim.crash(seededRandom(1));
    await expect(sim.write(fd, enc('x'), 0, 1, 5)).rejects.toMatchObject({ code: 'EBADF' });
    await expect(sim.fdatasync(fd)).rejects.toMatchObject({ code: 'EBADF' });
    await expect(sim.read(fd, new Uint8Array(4), 0, 4, 0)).rejects.toMatchObject({ code: 'EBADF' });
    const again = await sim.open('/f', 'read-write');
    expect(again).not.toBe(fd);
    expect(dec(await sim.readFile('/f'))).toBe('kept\n');
    expect(sim.boots).toBe(1);
  });

  it('a view taken before a crash rejects every call after it, so a dead process cannot touch the image', async () => {
    const sim = new SimulatedFileSystem();
    const dead = sim.view();
    await createSynced(sim, '/lock', 'held');
    sim.crash(seededRandom(1));
    await expect(dead.unlink('/lock')).rejects.toBeInstanceOf(SimulatedCrashError);
    expect(dec(sim.peek('/lock'))).toBe('held');
    await expect(sim.view().readFile('/lock')).resolves.toEqual(enc('held'));
  });

  it('link fails with EEXIST when the name exists and shares the inode otherwise (lock files, TJ-DUR-029)', async () => {
    const sim = new SimulatedFileSystem();
    await createSynced(sim, '/a', 'holder');
    await createSynced(sim, '/b', 'other');
    await expect(sim.link('/a', '/b')).rejects.toMatchObject({ code: 'EEXIST', syscall: 'link' });
    await expect(sim.link('/missing', '/c')).rejects.toMatchObject({ code: 'ENOENT' });
    await sim.link('/a', '/c');
    expect((await sim.stat('/c')).ino).toBe((await sim.stat('/a')).ino);
    await sim.unlink('/a');
    expect(dec(await sim.readFile('/c'))).toBe('holder');
    await sim.mkdir('/d');
    await expect(sim.link('/d', '/e')).rejects.toMatchObject({ code: 'EPERM' });
  });

  it('counts the names of a file in nlink, 0 once an open file lost its last one (TJ-DUR-036)', async () => {
    const sim = new SimulatedFileSystem();
    await sim.mkdir('/d');
    const fd = await createSynced(sim, '/d/f', 'x');
    expect((await sim.fstat(fd)).nlink).toBe(1);
    await sim.link('/d/f', '/g');
    expect((await sim.fstat(fd)).nlink).toBe(2);
    expect((await sim.stat('/g')).nlink).toBe(2);
    await sim.unlink('/d/f');
    expect((await sim.fstat(fd)).nlink).toBe(1);
    // Renamed over: the name now leads to another file, and the open one has none left.
    await createSynced(sim, '/h', 'y');
    await sim.rename('/h', '/g');
    expect((await sim.fstat(fd)).nlink).toBe(0);
    // Writes and syncs of the unlinked inode still succeed, as on a real file system.
    await writeText(sim, fd, 'z', 1);
    await sim.fdatasync(fd);
    expect(dec(await sim.readFile('/g'))).toBe('y');
  });

  it('reports Node errno codes like the real layer', async () => {
    const sim = new SimulatedFileSystem();
    await createSynced(sim, '/f', 'x');
    await sim.mkdir('/d');
    await expect(sim.open('/f', 'create-exclusive')).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(sim.open('/nope', 'read')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(sim.open('/nope/f', 'read-write')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(sim.open('/f/g', 'read-write')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(sim.open('/d', 'read-write')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(sim.readFile('/d')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(sim.unlink('/d')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(sim.readdir('/f')).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(sim.mkdir('/d')).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(sim.stat('/nope')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(sim.rename('/f', '/d')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(sim.close(999)).rejects.toMatchObject({ code: 'EBADF' });
    const ro = await sim.open('/f', 'read');
    await expect(sim.write(ro, enc('y'), 0, 1, 0)).rejects.toMatchObject({ code: 'EBADF' });
    await expect(sim.ftruncate(ro, 0)).rejects.toMatchObject({ code: 'EINVAL' });
    expect(await sim.readdir('/')).toEqual(['d', 'f']);
    expect(await sim.stat('/d')).toMatchObject({ isDirectory: true });
  });

  it('fails the n-th matching call with the injected errno, changing nothing (TJ-DUR-022)', async () => {
    const sim = new SimulatedFileSystem();
    const fd = await createSynced(sim, '/f', '');
    sim.inject({ op: 'write', nth: 2, errno: 'ENOSPC' }, { op: 'fdatasync', errno: 'EIO', path: '/f' });
    await writeText(sim, fd, 'a', 0);
    await expect(writeText(sim, fd, 'b', 1)).rejects.toMatchObject({ code: 'ENOSPC', syscall: 'write' });
    await expect(sim.fdatasync(fd)).rejects.toMatchObject({ code: 'EIO' });
    await sim.fdatasync(fd);
    expect(dec(sim.peek('/f'))).toBe('a');
  });

  it('crashAtCall makes call k and every later one throw until crash()', async () => {
    const sim = new SimulatedFileSystem();
    const fd = await createSynced(sim, '/f', 'a\n');
    sim.crashAtCall(sim.calls + 1);
    await writeText(sim, fd, 'b\n', 2);
    await expect(sim.fdatasync(fd)).rejects.toBeInstanceOf(SimulatedCrashError);
    await expect(sim.stat('/f')).rejects.toBeInstanceOf(SimulatedCrashError);
    expect(sim.halted).toBe(true);
    sim.crash(seededRandom(3));
    expect(sim.halted).toBe(false);
    expect(['a\n', 'a\nb', 'a\nb\n', 'a\n\0', 'a\n\0\0'].includes(dec(sim.peek('/f')) ?? '')).toBe(true);
    await expect(sim.stat('/f')).resolves.toMatchObject({ isDirectory: false });
  });

  it('materialize writes the current image to real files and load reads real files back as durable', async () => {
    const real = mkdtempSync(join(tmpdir(), 'tj-simfs-'));
    temporary.push(real);
    const sim = new SimulatedFileSystem();
    await sim.mkdir('/store');
    await sim.mkdir('/store/sub');
    const fd = await sim.open('/store/sub/f.jsonl', 'create-exclusive');
    await writeText(sim, fd, '{"a":1}\n', 0);
    sim.materialize(join(real, 'out'), '/store');
    expect(readFileSync(join(real, 'out', 'sub', 'f.jsonl'), 'utf8')).toBe('{"a":1}\n');
    mkdirSync(join(real, 'in', 'x'), { recursive: true });
    writeFileSync(join(real, 'in', 'x', 'g'), 'loaded');
    const other = new SimulatedFileSystem();
    other.load(join(real, 'in'), '/root');
    other.crash(seededRandom(1));
    expect(dec(other.peek('/root/x/g'))).toBe('loaded');
  });
});

describe('SimulatedFileSystem process death (kill)', () => {
  it('kill invalidates descriptors and views but loses nothing; unsynced data stays at risk of a later crash', async () => {
    const sim = new SimulatedFileSystem();
    const view = sim.view();
    const fd = await createSynced(sim, '/f', 'a\n');
    await writeText(sim, fd, 'b\n', 2);
    sim.kill();
    await expect(sim.fsync(fd)).rejects.toMatchObject({ code: 'EBADF' });
    await expect(view.stat('/f')).rejects.toBeInstanceOf(SimulatedCrashError);
    expect(dec(sim.peek('/f'))).toBe('a\nb\n');
    const seen = new Set<string>();
    for (let seed = 1; seed <= 32; seed++) {
      const copy = new SimulatedFileSystem();
      const copyFd = await createSynced(copy, '/f', 'a\n');
      await writeText(copy, copyFd, 'b\n', 2);
      copy.kill();
      copy.crash(seededRandom(seed));
      seen.add(dec(copy.peek('/f')) ?? '');
    }
    expect(seen.has('a\n')).toBe(true);
    expect(seen.has('a\nb\n')).toBe(true);
  });
});
