import { describe, expect, it } from 'vitest';
import { checkDurableOpen, checkLockAppearsWhole, checkSyncBeforeClose } from '../../../src/adapter/runner/writer/trace-steps.js';

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

describe('strace check of how a lock file appears (TJ-DUR-029)', () => {
  const lock = `${file}.lock`;
  const tmp = `${dir}/.s1.jsonl.lock.ab12.tmp`;
  const tmpOpen = `100 openat(AT_FDCWD, "${tmp}", O_WRONLY|O_CREAT|O_EXCL, 0644) = 7`;
  const tmpWrite = '100 write(7, "{\\"pid\\":1}", 9) = 9';
  const tmpSync = '100 fsync(7) = 0';
  const link = `100 linkat(AT_FDCWD, "${tmp}", AT_FDCWD, "${lock}", 0) = 0`;

  it('accepts a lock linked from a temporary file that was written and synced', () => {
    expect(checkLockAppearsWhole([tmpOpen, tmpWrite, tmpSync, link, respond(2)].join('\n'), lock, 2)).toEqual([]);
    const renamed = `100 rename("${tmp}", "${lock}") = 0`;
    expect(checkLockAppearsWhole([tmpOpen, tmpWrite, tmpSync, renamed, respond(2)].join('\n'), lock, 2)).toEqual([]);
  });

  it('accepts an O_TMPFILE linked by its descriptor once written and synced', () => {
    const anonymous = `100 openat(AT_FDCWD, "${dir}", O_WRONLY|O_TMPFILE, 0644) = 7`;
    const byFd = `100 linkat(7, "", AT_FDCWD, "${lock}", AT_EMPTY_PATH) = 0`;
    expect(checkLockAppearsWhole([anonymous, tmpWrite, tmpSync, byFd, respond(2)].join('\n'), lock, 2)).toEqual([]);
  });

  it('fails a lock created in place, one linked before its source was synced, and one that never appeared', () => {
    const inPlace = `100 openat(AT_FDCWD, "${lock}", O_WRONLY|O_CREAT|O_EXCL, 0644) = 7`;
    expect(checkLockAppearsWhole([inPlace, tmpWrite, tmpSync, respond(2)].join('\n'), lock, 2)[0]).toContain(
      'created in place by an open with O_CREAT',
    );
    expect(checkLockAppearsWhole([tmpOpen, tmpWrite, link, tmpSync, respond(2)].join('\n'), lock, 2)[0]).toContain(
      'before that file was synced',
    );
    expect(checkLockAppearsWhole([tmpOpen, tmpSync, link, respond(2)].join('\n'), lock, 2)[0]).toContain(
      'which was not written first',
    );
    expect(checkLockAppearsWhole([tmpOpen, tmpWrite, tmpSync, respond(2), link].join('\n'), lock, 2)[0]).toContain(
      'did not appear before the answer',
    );
  });
});
