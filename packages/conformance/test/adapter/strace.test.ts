import { describe, expect, it } from 'vitest';
import { checkSyncBeforeAck, parseStrace } from '../support/internals.js';

const FILE = '/tmp/store/_turn_journal/s1.jsonl';
const write = (seq: number) => `101 pwrite64(23, "{\\"version\\":1,\\"x_tj_seq\\":${seq}}\\n", 30, 0 <unfinished ...>`;
const ack = (id: number) => `100 write(1, "{\\"id\\":${id},\\"ok\\":true,\\"result\\":{}}\\n", 31) = 31`;

describe('the fsync-before-ack check reads an strace trace (TJ-CONF-014, TJ-DUR-003)', () => {
  it('joins unfinished and resumed calls across threads', () => {
    const calls = parseStrace(
      [
        `100 openat(AT_FDCWD, "${FILE}", O_RDWR|O_CREAT <unfinished ...>`,
        '101 close(5) = 0',
        '100 <... openat resumed>) = 23',
      ].join('\n'),
    );
    expect(calls.map((c) => [c.name, c.ret, c.start, c.end])).toEqual([
      ['close', 0, 1, 1],
      ['openat', 23, 0, 2],
    ]);
  });

  it('passes when the sync of the file returns between the write and the ack', () => {
    const trace = [
      `100 openat(AT_FDCWD, "${FILE}", O_RDWR|O_CREAT, 0666) = 23`,
      write(0),
      '101 <... pwrite64 resumed>) = 30',
      '102 fdatasync(23 <unfinished ...>',
      '102 <... fdatasync resumed>) = 0',
      ack(7),
    ].join('\n');
    expect(checkSyncBeforeAck(trace, FILE, [{ id: 7, seq: 0 }])).toEqual([]);
  });

  it('fails when the ack is written before the sync returns, or the sync is of another file', () => {
    const early = [
      `100 openat(AT_FDCWD, "${FILE}", O_RDWR|O_CREAT, 0666) = 23`,
      write(0),
      '101 <... pwrite64 resumed>) = 30',
      '102 fdatasync(23 <unfinished ...>',
      ack(7),
      '102 <... fdatasync resumed>) = 0',
    ].join('\n');
    expect(checkSyncBeforeAck(early, FILE, [{ id: 7, seq: 0 }])).toEqual([
      expect.stringContaining('append id 7 (x_tj_seq 0): acknowledged (trace line 5) without an fsync/fdatasync'),
    ]);
    const otherFile = [
      `100 openat(AT_FDCWD, "${FILE}", O_RDWR|O_CREAT, 0666) = 23`,
      '100 openat(AT_FDCWD, "/tmp/other", O_RDWR) = 24',
      write(0),
      '101 <... pwrite64 resumed>) = 30',
      '102 fsync(24) = 0',
      ack(7),
    ].join('\n');
    expect(checkSyncBeforeAck(otherFile, FILE, [{ id: 7, seq: 0 }])).toHaveLength(1);
    expect(checkSyncBeforeAck(otherFile, FILE, [{ id: 8, seq: 1 }])[0]).toContain(
      'its acknowledgement is not in the trace',
    );
  });
});
