import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeFileSystem, openTurnJournal, synchronousReadFile } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

// Issue 11, defect 8: the writer followed symbolic links (a journal linked to a file outside the store was truncated
// and appended to) and opened FIFOs, hanging in open(2) or read(2) for ever. Spec TJ-DUR-031, TJ-DUR-032.

const guards: NodeJS.Timeout[] = [];
afterEach(() => {
  for (const guard of guards.splice(0)) clearTimeout(guard);
});

/**
 * Makes a FIFO, and a guard that, should anything still wait on it after 10 s (the defect), opens its other end so
 * the test ends with a failed assertion instead of a thread stuck in the kernel. `waited()` says whether it had to.
 */
function fifoWithGuard(path: string): { waited: () => boolean } {
  execFileSync('mkfifo', [path]);
  let waited = false;
  const release = () => {
    for (const flags of [constants.O_WRONLY | constants.O_NONBLOCK, constants.O_RDONLY | constants.O_NONBLOCK]) {
      try {
        closeSync(openSync(path, flags));
        if ((flags & constants.O_WRONLY) !== 0) waited = true; // a reader was blocked on it
      } catch {
        // ENXIO: nobody is reading, nothing to release
      }
    }
  };
  guards.push(setTimeout(release, 10_000));
  return { waited: () => waited };
}

describe('nodeFileSystem refuses links and special files (TJ-DUR-031, TJ-DUR-032)', () => {
  const readFileNow = synchronousReadFile(nodeFileSystem) as (path: string) => Uint8Array;

  it('rejects a symbolic link with ELOOP in every open mode and in readFile (and its synchronous twin)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'target'), 'outside\n');
    symlinkSync(join(dir, 'target'), join(dir, 'link'));
    for (const mode of ['read', 'read-write'] as const)
      await expect(nodeFileSystem.open(join(dir, 'link'), mode)).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(nodeFileSystem.readFile(join(dir, 'link'))).rejects.toMatchObject({ code: 'ELOOP' });
    expect(() => readFileNow(join(dir, 'link'))).toThrow(expect.objectContaining({ code: 'ELOOP' }));
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('outside\n');
  });

  it('rejects a FIFO and a device with EFTYPE without waiting for the other end', async () => {
    const dir = tempDir();
    const fifo = fifoWithGuard(join(dir, 'fifo'));
    await expect(nodeFileSystem.open(join(dir, 'fifo'), 'read')).rejects.toMatchObject({ code: 'EFTYPE' });
    await expect(nodeFileSystem.open(join(dir, 'fifo'), 'read-write')).rejects.toMatchObject({ code: 'EFTYPE' });
    await expect(nodeFileSystem.readFile(join(dir, 'fifo'))).rejects.toMatchObject({ code: 'EFTYPE' });
    expect(() => readFileNow(join(dir, 'fifo'))).toThrow(expect.objectContaining({ code: 'EFTYPE' }));
    await expect(nodeFileSystem.open('/dev/zero', 'read')).rejects.toMatchObject({ code: 'EFTYPE' });
    expect(fifo.waited()).toBe(false);
  });
});

describe('openTurnJournal on links and special files', () => {
  it('refuses a journal that links to a file outside the store, leaving that file unchanged', async () => {
    const outside = tempDir();
    const victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'line one\nno newline at the end');
    const dir = join(tempDir(), '_turn_journal');
    mkdirSync(dir);
    symlinkSync(victim, join(dir, 's1.jsonl'));
    await expect(openTurnJournal({ dir, sessionId: 's1' })).rejects.toMatchObject({
      code: 'not_regular_file',
      errno: 'ELOOP',
      file: join(dir, 's1.jsonl'),
    });
    expect(readFileSync(victim, 'utf8')).toBe('line one\nno newline at the end');
  });

  it('refuses a journal that links to /dev/zero', async () => {
    const dir = join(tempDir(), '_turn_journal');
    mkdirSync(dir);
    symlinkSync('/dev/zero', join(dir, 's1.jsonl'));
    await expect(openTurnJournal({ dir, sessionId: 's1' })).rejects.toMatchObject({ code: 'not_regular_file' });
  });

  it('refuses a journal that is a FIFO instead of reading it for ever', async () => {
    const dir = join(tempDir(), '_turn_journal');
    mkdirSync(dir);
    const fifo = fifoWithGuard(join(dir, 's1.jsonl'));
    await expect(openTurnJournal({ dir, sessionId: 's1' })).rejects.toMatchObject({
      code: 'not_regular_file',
      errno: 'EFTYPE',
    });
    expect(fifo.waited()).toBe(false);
  });

  it('submits past a sibling shard that is a FIFO, never opening it for a blocking read', async () => {
    const dir = join(tempDir(), '_turn_journal');
    mkdirSync(dir);
    const fifo = fifoWithGuard(join(dir, 's1~other.jsonl'));
    const journal = await openTurnJournal({ dir, sessionId: 's1', shard: 'mine' });
    const { created } = await journal.submit({ content: 'hello', turnId: 't1' });
    await journal.close();
    expect(created).toBe(true);
    expect(fifo.waited()).toBe(false);
    expect(readFileSync(join(dir, 's1~mine.jsonl'), 'utf8')).toContain('"turn_id":"t1"');
  });
});
