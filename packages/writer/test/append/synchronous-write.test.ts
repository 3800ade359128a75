// An AppendFile on a file system with a synchronous twin of its awaited write (the real one has it): the write is made
// through the twin, and in `every` mode the record's fdatasync is issued in the same synchronous run as the append.
// Short writes, a failing write and a torn one are handled as on the asynchronous path (TJ-DUR-002, TJ-DUR-023).
import { readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errnoError } from '../support/faulty-fs.js';
import {
  AppendFile,
  encodeRecord,
  type FileSystem,
  JournalWriteError,
  nodeFileSystem,
  SYNC_WRITE_MAX_BYTES,
  withSynchronousWrite,
} from '../support/internals.js';
import { eventRecord } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

/** What the twin does on its next calls: write fully, write at most `short` bytes, or write `torn` bytes and fail. */
type Step = { short: number } | { torn: number; errno: string };

/** The real file system with a synchronous write twin that follows `plan`, and a log of the write and sync calls. */
function twinFileSystem(plan: Step[] = []) {
  const log: string[] = [];
  const fs: FileSystem = {
    ...nodeFileSystem,
    write: (...args) => {
      log.push('write');
      return nodeFileSystem.write(...args);
    },
    fdatasync: (fd) => {
      log.push('fdatasync');
      return nodeFileSystem.fdatasync(fd);
    },
  };
  withSynchronousWrite(fs, (fd, buffer, offset, length, position) => {
    log.push('writeNow');
    const step = plan.shift();
    if (step === undefined) return writeSync(fd, buffer, offset, length, position);
    if ('short' in step) return writeSync(fd, buffer, offset, Math.min(length, step.short), position);
    writeSync(fd, buffer, offset, Math.min(length, step.torn), position);
    throw errnoError(step.errno, 'write', 'journal');
  });
  return { fs, log, plan };
}

function journalPath(): string {
  return join(tempDir('tj-sync-write-'), 'events.jsonl');
}

/** The lines of the file, without the pre-allocated space after them. */
function linesOf(file: string): string[] {
  return readFileSync(file, 'utf8').replace(/\0+$/, '').split('\n').filter(Boolean);
}

describe('AppendFile through a synchronous write twin', () => {
  it('issues the fdatasync of an every-mode append in the same synchronous run as the call', async () => {
    const { fs, log } = twinFileSystem();
    const file = await AppendFile.open(journalPath(), { durability: 'every', fs });
    log.length = 0;
    const appended = file.appendRecord(eventRecord(0));
    // Nothing awaited yet: the write and its sync are both issued.
    expect(log).toEqual(['writeNow', 'fdatasync']);
    await appended;
    await file.close();
  });

  it('goes through the asynchronous write for a write larger than a synchronous one may be', async () => {
    const { fs, log } = twinFileSystem();
    const file = await AppendFile.open(journalPath(), { durability: 'every', fs });
    log.length = 0;
    await file.appendRecord(eventRecord(0, 'x'.repeat(SYNC_WRITE_MAX_BYTES)));
    expect(log).toEqual(['write', 'fdatasync']);
    await file.close();
  });

  it('repeats a short synchronous write until the whole line is written (TJ-DUR-002)', async () => {
    const path = journalPath();
    const plan: Step[] = [];
    const { fs, log } = twinFileSystem(plan);
    const file = await AppendFile.open(path, { durability: 'every', fs });
    await file.appendRecord(eventRecord(0));
    const line = encodeRecord(eventRecord(1));
    plan.push({ short: 10 }, { short: 1 });
    log.length = 0;
    const ack = await file.appendLine(line);
    expect(log).toEqual(['writeNow', 'writeNow', 'writeNow', 'fdatasync']);
    expect(ack.length).toBe(line.length);
    await file.close();
    expect(linesOf(path).map((text) => JSON.parse(text).seq)).toEqual([1, 2]);
  });

  for (const errno of ['ENOSPC', 'EIO'])
    it(`a synchronous write failing with ${errno} after tearing part of the line rejects with write_failed, truncates the part away, and the next append succeeds (TJ-DUR-023)`, async () => {
      const path = journalPath();
      const plan: Step[] = [];
      const { fs } = twinFileSystem(plan);
      const file = await AppendFile.open(path, { durability: 'every', fs });
      await file.appendRecord(eventRecord(0));
      const before = file.size;
      plan.push({ torn: 12, errno });
      const failure = await file.appendRecord(eventRecord(1, 'lost '.repeat(40))).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(JournalWriteError);
      expect(failure).toMatchObject({ code: 'write_failed', operation: 'write', errno });
      expect(file.poisoned).toBe(false);
      expect(file.size).toBe(before);
      expect(statSync(path).size, 'the torn part was truncated away, and the space with it').toBe(before);
      await file.appendRecord(eventRecord(2));
      await file.close();
      expect(linesOf(path).map((text) => JSON.parse(text).seq)).toEqual([1, 3]);
    });
});
