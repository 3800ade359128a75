// An operator (or a cleanup script) removes a session's directory or journal while its writer holds it open. Every
// later append then goes to an inode no name leads to: the write and the fdatasync succeed, and before TJ-DUR-036 the
// caller was told the record was durable although no reader will ever find it. The writer must refuse instead, no
// later than the acknowledgement of the first record written after the removal.
import { existsSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AppendFile,
  type Durability,
  type FileSystem,
  nodeFileSystem,
  openEventLog,
  openTurnJournal,
} from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const line = (n: number) => new TextEncoder().encode(`{"n":${n}}\n`);

describe('a journal removed under its writer (TJ-DUR-036)', () => {
  it('refuses the next submit of a turn journal once its session directory is gone', async () => {
    const root = tempDir();
    const dir = join(root, 'sessions', 's1');
    const journal = await openTurnJournal({ dir, sessionId: 's1' });
    await journal.submit({ content: 'first' });
    // A refused record is that call's answer alone: the journal is not poisoned by it.
    await expect(journal.submit({ content: 42 as unknown as string })).rejects.toMatchObject({
      code: 'invalid_record',
    });
    expect(journal.poisoned).toBe(false);
    rmSync(join(root, 'sessions'), { recursive: true, force: true });
    // A generated turn id (a caller's id makes the writer look at the session's other shards first, which fails on
    // the missing directory before anything is written).
    await expect(journal.submit({ content: 'second' })).rejects.toMatchObject({
      code: 'journal_unlinked',
      file: join(dir, 's1.jsonl'),
      message: expect.stringContaining('TJ-DUR-036'),
    });
    // Refused for good, and it says so (what a live session reopens its journal on).
    expect(journal.poisoned).toBe(true);
    await expect(journal.submit({ content: 'third' })).rejects.toMatchObject({
      code: 'writer_poisoned',
    });
    await journal.close();
    expect(existsSync(dir)).toBe(false);
    // A reopen creates the journal afresh, and its records are in the file.
    const reopened = await openTurnJournal({ dir, sessionId: 's1' });
    expect(reopened.opened.created).toBe(true);
    await reopened.submit({ content: 'again', turnId: 't4' });
    await reopened.close();
    expect(readFileSync(join(dir, 's1.jsonl'), 'utf8')).toContain('"turn_id":"t4"');
  });

  it('refuses the next durable append of an event log whose file was unlinked', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file });
    await log.appendMessage({ role: 'user', content: 'kept' });
    unlinkSync(file);
    await expect(log.appendMessage({ role: 'user', content: 'lost' })).rejects.toMatchObject({
      code: 'journal_unlinked',
    });
    await log.close();
    expect(existsSync(file)).toBe(false);
  });

  for (const durability of ['every', 'group'] as const satisfies readonly Durability[]) {
    it(`rejects every append of the first sync after the unlink in ${durability} mode`, async () => {
      const path = join(tempDir(), 'j.jsonl');
      const file = await AppendFile.open(path, { durability });
      await file.appendLine(line(0));
      unlinkSync(path);
      const results = await Promise.allSettled([1, 2, 3].map((n) => file.appendLine(line(n))));
      expect(results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'resolved'))).toEqual(
        ['journal_unlinked', 'journal_unlinked', 'journal_unlinked'].map((code, i) =>
          // In `group` mode the appends made while the first one syncs share the next sync: all three are refused
          // by one check; after the first refusal the file is poisoned.
          durability === 'every' && i > 0 ? 'writer_poisoned' : code,
        ),
      );
      expect(file.poisoned).toBe(true);
      await file.close();
    });
  }

  it('in none mode, refuses the flush that would make records durable, and the close', async () => {
    const path = join(tempDir(), 'j.jsonl');
    const file = await AppendFile.open(path, { durability: 'none' });
    await file.appendLine(line(0));
    await file.flush();
    unlinkSync(path);
    // Acknowledged once handed to the OS (TJ-DUR-015's mode): nothing is durable yet, and nothing claimed it is.
    await file.appendLine(line(1));
    await expect(file.flush()).rejects.toMatchObject({ code: 'journal_unlinked' });
    await expect(file.appendLine(line(2))).rejects.toMatchObject({ code: 'writer_poisoned' });
    await file.close();
  });

  it('in none mode, a close whose final sync covers records of an unlinked file rejects', async () => {
    const path = join(tempDir(), 'j.jsonl');
    const file = await AppendFile.open(path, { durability: 'none' });
    await file.appendLine(line(0));
    unlinkSync(path);
    await expect(file.close()).rejects.toMatchObject({ code: 'journal_unlinked' });
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('a file renamed or given a second name is still linked: appends go on', async () => {
    const path = join(tempDir(), 'j.jsonl');
    const file = await AppendFile.open(path, { durability: 'every' });
    await file.appendLine(line(0));
    await nodeFileSystem.link(path, `${path}.copy`);
    unlinkSync(path);
    await file.appendLine(line(1));
    await file.close();
    expect(readFileSync(`${path}.copy`, 'utf8')).toBe('{"n":0}\n{"n":1}\n');
  });

  it('a file system whose fstat gives no nlink is not checked (custom layers keep working)', async () => {
    const path = join(tempDir(), 'j.jsonl');
    const fs: FileSystem = {
      ...nodeFileSystem,
      fstat: async (fd) => {
        const { nlink: _dropped, ...rest } = await nodeFileSystem.fstat(fd);
        return rest;
      },
    };
    const file = await AppendFile.open(path, { durability: 'every', fs });
    await file.appendLine(line(0));
    unlinkSync(path);
    // With no `nlink` to go by, nothing tells an unlinked file from a linked one: the appends and the close go on (a
    // missing count taken as 0 would refuse them as `journal_unlinked`).
    await expect(file.appendLine(line(1))).resolves.toEqual({ cursor: 8, length: 8 });
    await expect(file.close()).resolves.toBeUndefined();
    expect(existsSync(path)).toBe(false);
  });

  it('checks the file itself only when its directory changed, and so still sees an unlink after a quiet spell', async () => {
    const dir = tempDir();
    const path = join(dir, 'j.jsonl');
    let fstats = 0;
    const fs: FileSystem = {
      ...nodeFileSystem,
      fstat: (fd) => {
        fstats += 1;
        return nodeFileSystem.fstat(fd);
      },
    };
    const file = await AppendFile.open(path, { durability: 'every', fs });
    // Let the directory's change time (the file's and the lock's creation) settle, then see the file linked once.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await file.appendLine(line(0));
    const before = fstats;
    for (let n = 1; n <= 5; n++) await file.appendLine(line(n));
    // The directory did not change: its `stat` proves the name is still there, no `fstat` of the file is needed.
    expect(fstats).toBe(before);
    unlinkSync(path);
    await expect(file.appendLine(line(6))).rejects.toMatchObject({ code: 'journal_unlinked' });
    expect(fstats).toBe(before + 1);
    await file.close();
  });

  it('sees a file renamed over the journal after a quiet spell', async () => {
    const dir = tempDir();
    const path = join(dir, 'j.jsonl');
    const file = await AppendFile.open(path, { durability: 'group' });
    await new Promise((resolve) => setTimeout(resolve, 250));
    await file.appendLine(line(0));
    await nodeFileSystem.open(join(dir, 'other'), 'create-exclusive').then((fd) => nodeFileSystem.close(fd));
    await nodeFileSystem.rename(join(dir, 'other'), path);
    await expect(file.appendLine(line(1))).rejects.toMatchObject({ code: 'journal_unlinked' });
    await file.close();
    expect(readFileSync(path, 'utf8')).toBe('');
  });
});
