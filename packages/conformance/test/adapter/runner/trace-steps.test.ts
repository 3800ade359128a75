import { describe, expect, it } from 'vitest';
import { checkDurableOpen, checkSyncBeforeClose } from '../../../src/adapter/runner/writer/trace-steps.js';

const file = '/tmp/x/_turn_journal/s1.jsonl';
const dir = '/tmp/x/_turn_journal';
const respond = (id: number) => `100 write(1, "{\\"id\\":${id},\\"ok\\":true,\\"result\\":{}}\\n", 30) = 30`;

describe('strace checks of open and close (TJ-DUR-007, TJ-DUR-015)', () => {
  const created = `100 openat(AT_FDCWD, "${file}", O_WRONLY|O_CREAT|O_EXCL, 0644) = 5`;
  const fileSync = '100 fsync(5) = 0';
  const dirOpen = `100 openat(AT_FDCWD, "${dir}", O_RDONLY|O_DIRECTORY) = 6`;
  const dirSync = '100 fsync(6) = 0';

  it('accepts a file fsync and a directory fsync after the creation, before the answer', () => {
    expect(checkDurableOpen([created, fileSync, dirOpen, dirSync, respond(2)].join('\n'), file, 2)).toEqual([]);
  });

  it('names the missing directory fsync, and a directory fsync that came before the file was created', () => {
    expect(checkDurableOpen([created, fileSync, respond(2)].join('\n'), file, 2)).toEqual([
      `open was answered before the directory ${dir} was fsynced after the file was created (TJ-DUR-007)`,
    ]);
    expect(checkDurableOpen([dirOpen, dirSync, created, fileSync, respond(2)].join('\n'), file, 2)).toHaveLength(1);
  });

  it('does not count syncs that finish after the answer started, nor failed ones', () => {
    const late = [created, respond(2), fileSync, dirOpen, dirSync].join('\n');
    expect(checkDurableOpen(late, file, 2)).toHaveLength(2);
    const failed = [created, '100 fsync(5) = -1 EIO (Input/output error)', dirOpen, dirSync, respond(2)].join('\n');
    expect(checkDurableOpen(failed, file, 2)).toEqual([
      `open was answered before the new file ${file} was fsynced (TJ-DUR-007)`,
    ]);
  });

  it('close in none mode needs a sync after the last write, before the answer', () => {
    const write = '100 write(5, "{\\"x_tj_seq\\":0}\\n", 15) = 15';
    expect(checkSyncBeforeClose([created, write, fileSync, respond(9)].join('\n'), file, 9)).toEqual([]);
    expect(checkSyncBeforeClose([created, fileSync, write, respond(9)].join('\n'), file, 9)).toEqual([
      `close was answered without an fsync/fdatasync of ${file} after its last write (TJ-DUR-015)`,
    ]);
  });
});
