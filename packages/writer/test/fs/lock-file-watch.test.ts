// The look at a held lock after a sync (TJ-DUR-040): the lock file is read only when its change time no longer proves
// it unchanged since it was last read and found the holder's. What is given to the watch here is what a file system's
// `stat` and `readFile` answer; the real ones are used by the integration tests in durability/lease.test.ts.
import { describe, expect, it } from 'vitest';
import type { FileStat } from '../../src/fs/file-system.js';
import { LockFileWatch } from '../../src/fs/lock-file-state.js';

const INO = 41;
const MINE = new TextEncoder().encode(JSON.stringify({ pid: 1, host: 'h', token: 'mine' }));
const THEIRS = new TextEncoder().encode(JSON.stringify({ pid: 2, host: 'h', token: 'theirs' }));

/** A lock file whose inode, change time and text the test sets, counting reads of its text. */
function lockFile(ctimeMs: number) {
  const file = { ino: INO, ctimeMs, text: MINE, reads: 0 };
  const stat = (): FileStat => ({ size: file.text.length, ino: file.ino, isDirectory: false, ctimeMs: file.ctimeMs });
  const readFile = () => {
    file.reads += 1;
    return file.text;
  };
  return { file, now: { stat, readFile }, readFileAsync: async () => readFile() };
}

const settled = () => Date.now() - 60_000;

describe('LockFileWatch', () => {
  it('reads a settled lock once, then trusts its unchanged change time', async () => {
    const { file, now, readFileAsync } = lockFile(settled());
    const watch = new LockFileWatch('/j.lock', { ino: INO, token: 'mine' });
    expect(watch.stateNow(now)).toBe('held');
    expect(watch.stateNow(now)).toBe('held');
    expect(await watch.state(now.stat, readFileAsync)).toBe('held');
    expect(file.reads).toBe(1);
  });

  it('reads again once the change time moved, and finds a lock that reused the inode number replaced', async () => {
    const { file, now, readFileAsync } = lockFile(settled());
    const watch = new LockFileWatch('/j.lock', { ino: INO, token: 'mine' });
    expect(watch.stateNow(now)).toBe('held');
    // Removed and created again by a taker: the same inode number, a later change time, the taker's token.
    file.ctimeMs = Date.now();
    file.text = THEIRS;
    expect(watch.stateNow(now)).toBe('replaced');
    expect(await watch.state(now.stat, readFileAsync)).toBe('replaced');
    expect(file.reads).toBe(3);
  });

  it('reads at every look while the change time is too recent to prove anything', () => {
    const { file, now } = lockFile(Date.now());
    const watch = new LockFileWatch('/j.lock', { ino: INO, token: 'mine' });
    for (let i = 0; i < 3; i += 1) expect(watch.stateNow(now)).toBe('held');
    expect(file.reads).toBe(3);
  });

  it('answers from the inode alone when it changed, and `gone` when the file is', () => {
    const { file, now } = lockFile(settled());
    const watch = new LockFileWatch('/j.lock', { ino: INO, token: 'mine' });
    file.ino = INO + 1;
    expect(watch.stateNow(now)).toBe('replaced');
    expect(file.reads).toBe(0);
    const gone = Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    const missing = {
      stat: (): FileStat => {
        throw gone;
      },
      readFile: now.readFile,
    };
    expect(watch.stateNow(missing)).toBe('gone');
  });

  it('throws an error of the look other than ENOENT', () => {
    const { now } = lockFile(settled());
    const watch = new LockFileWatch('/j.lock', { ino: INO, token: 'mine' });
    const denied = Object.assign(new Error('EACCES'), { code: 'EACCES' });
    const failing = {
      stat: now.stat,
      readFile: (): Uint8Array => {
        throw denied;
      },
    };
    expect(() => watch.stateNow(failing)).toThrow(denied);
  });
});
