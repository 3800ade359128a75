import { describe, expect, it } from 'vitest';
import {
  checkDurableOpen,
  checkLockAppearsWhole,
  checkSyncBeforeClose,
  traceSteps,
} from '../../../src/adapter/runner/writer/trace-steps.js';
import {
  unsafeReplace,
  unsyncedDirectories,
  unsyncedInterruptions,
} from '../../../src/adapter/runner/writer/traced-store-ops.js';

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

describe('strace checks of directories, recovery and sweep rewrites (TJ-DUR-008, TJ-RECOV-007, TJ-DUR-009, TJ-RET-008)', () => {
  const root = '/tmp/x';
  const mkdir = `100 mkdir("${dir}", 0777) = 0`;
  const rootOpen = `100 openat(AT_FDCWD, "${root}", O_RDONLY|O_DIRECTORY) = 8`;
  const rootSync = '100 fsync(8) = 0';

  it('a created directory needs its parent synced after it, before the answer', () => {
    expect(unsyncedDirectories(traceSteps([mkdir, rootOpen, rootSync, respond(3)].join('\n')), 4, 'x')).toEqual([]);
    expect(unsyncedDirectories(traceSteps([rootOpen, rootSync, mkdir, respond(3)].join('\n')), 4, 'x')[0]).toContain(
      'without an fsync of its parent /tmp/x',
    );
    expect(unsyncedDirectories(traceSteps(respond(3)), 1, 'x')[0]).toContain('created no directory');
  });

  it('an interrupted record needs a sync of its journal after its write, before the answer', () => {
    const write = '100 write(5, "{\\"event\\":\\"interrupted\\"}\\n", 24) = 24';
    const created = `100 openat(AT_FDCWD, "${file}", O_WRONLY|O_APPEND) = 5`;
    expect(unsyncedInterruptions(traceSteps([created, write, '100 fsync(5) = 0'].join('\n')), file, 9)).toEqual([]);
    expect(unsyncedInterruptions(traceSteps([created, '100 fsync(5) = 0', write].join('\n')), file, 9)[0]).toContain(
      'TJ-RECOV-007',
    );
    expect(unsyncedInterruptions(traceSteps(created), file, 9)[0]).toContain('before any interrupted record');
  });

  it('a rewrite needs a synced temporary file beside the target, a directory sync, and the lock held across it', () => {
    const tmp = `${dir}/.s1.jsonl.1.tmp`;
    const lockTaken = `100 linkat(AT_FDCWD, "${dir}/l.tmp", AT_FDCWD, "${file}.lock", 0) = 0`;
    const tmpOpen = `100 openat(AT_FDCWD, "${tmp}", O_WRONLY|O_CREAT|O_EXCL, 0644) = 7`;
    const tmpWrite = '100 write(7, "{}\\n", 3) = 3';
    const tmpSync = '100 fsync(7) = 0';
    const rename = `100 rename("${tmp}", "${file}") = 0`;
    const dirOpen = `100 openat(AT_FDCWD, "${dir}", O_RDONLY|O_DIRECTORY) = 6`;
    const dirSync = '100 fsync(6) = 0';
    const unlockEarly = `100 unlink("${file}.lock") = 0`;
    const good = [lockTaken, tmpOpen, tmpWrite, tmpSync, rename, dirOpen, dirSync];
    expect(unsafeReplace(traceSteps(good.join('\n')), file, 99)).toEqual([]);
    const problems = (lines: string[]) => unsafeReplace(traceSteps(lines.join('\n')), file, 99).join(' | ');
    expect(problems(good.filter((l) => l !== tmpSync))).toContain('before it was synced (TJ-DUR-009)');
    expect(problems(good.filter((l) => l !== dirSync))).toContain('not synced after the rename');
    expect(problems(good.filter((l) => l !== lockTaken))).toContain('without taking its writer lock');
    expect(problems([lockTaken, unlockEarly, tmpOpen, tmpWrite, tmpSync, rename, dirOpen, dirSync])).toContain(
      'released before',
    );
    expect(problems([lockTaken, tmpOpen, tmpWrite, tmpSync])).toContain('was not replaced by a rename');
    const elsewhere = good.map((l) => l.replaceAll(tmp, '/tmp/other/s1.tmp'));
    expect(problems(elsewhere)).toContain('not in the same directory');
  });
});
