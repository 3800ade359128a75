import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { nodeFileSystem, openTurnJournal, replaceFile } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

/**
 * A clean-up that fails after the operation it cleans up failed (the close of a file a failed open had opened, the
 * removal of a temporary file) is not dropped: the operation's error is thrown, and carries it in `suppressed`.
 */
describe('failures of the clean-up after a failure', () => {
  it('keeps the failed close of a journal whose open failed on the open error', async () => {
    const dir = tempDir();
    const first = await openTurnJournal({ dir, sessionId: 's', shard: 'a' });
    await first.submit({ content: 'hello', turnId: 't1' });
    await first.close();
    // Opening the existing file syncs it before trusting it: that sync fails, and so does the close of its descriptor.
    const fs = faultyFileSystem(nodeFileSystem, [
      { op: 'fsync', path: 's~a.jsonl', errno: 'EIO' },
      { op: 'close', path: 's~a.jsonl', errno: 'EBADF' },
    ]);
    const failure = await openTurnJournal({ dir, sessionId: 's', shard: 'a', fs }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'write_failed', operation: 'fsync', errno: 'EIO' });
    expect((failure as { suppressed?: unknown[] }).suppressed).toEqual([
      expect.objectContaining({ code: 'EBADF', syscall: 'close' }),
    ]);
    // The lock was released all the same: the journal opens again.
    const again = await openTurnJournal({ dir, sessionId: 's', shard: 'a' });
    expect(again.stateOf('t1')).toBe('submitted');
    await again.close();
  });

  it('keeps the failed removal of the temporary file on the rename error of a replace', async () => {
    const dir = tempDir();
    const target = join(dir, 'state.json');
    const fs = faultyFileSystem(nodeFileSystem, [
      { op: 'rename', errno: 'EXDEV' },
      { op: 'unlink', path: /\.tmp$/, errno: 'EACCES' },
    ]);
    const failure = await replaceFile(fs, target, [new TextEncoder().encode('{}')]).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'write_failed', operation: 'rename', errno: 'EXDEV' });
    expect((failure as { suppressed?: unknown[] }).suppressed).toEqual([
      expect.objectContaining({ code: 'EACCES', syscall: 'unlink' }),
    ]);
  });
});
