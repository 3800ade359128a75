import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { type Fault, faultyFileSystem } from '../support/faulty-fs.js';
import { compactEventLog, type EventLog, nodeFileSystem, openEventLog } from '../support/internals.js';
import { readLinesOf } from '../support/space.js';
import { tempDir } from '../support/temp.js';
import { seqsOf, steppingClock } from './support.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const LATER = Date.parse('2026-03-01T00:00:00.000Z');
const TEMPORARY = /\.events\.jsonl\.[0-9a-f]+\.tmp$/;

async function deliveredRun(log: EventLog, id: string): Promise<void> {
  await log.chatStarted({ requestId: id, content: `q-${id}` });
  await log.appendMessage({ role: 'user', content: `q-${id}` });
  await log.chatDone({ requestId: id });
  await log.ack(id, { clientId: 'c1' });
}

/** A log in a fresh directory with two delivered runs, a checkpoint between them: one compaction can remove `r1`. */
async function compactableLog() {
  const dir = tempDir();
  const file = join(dir, 'events.jsonl');
  const fs = faultyFileSystem(nodeFileSystem);
  const log = await openEventLog({ file, fs, clock: steppingClock(T0) });
  await deliveredRun(log, 'r1');
  await log.checkpoint();
  await deliveredRun(log, 'r2');
  return { dir, file, fs, log };
}

/**
 * A compaction of an open event log writes a copy of what it keeps to a temporary file and renames it over the log
 * (TJ-DUR-009). A failure before the rename leaves the log as it was: the writer goes on appending (as
 * `AppendFile.rewrite` allows), and the compaction can be tried again. Before, any failure of the replacement broke
 * the writer (`writer_poisoned` on every later append until a reopen): a disk too full for the copy, the usual reason
 * to compact, took a live session's log down with it.
 */
describe('EventLog.compact: a failure before the rename leaves the writer appending and no temporary file (TJ-DUR-009, TJ-DUR-022, TJ-DUR-037)', () => {
  const steps: [string, string, Fault][] = [
    ['the listing of stale temporary files', 'readdir', { op: 'readdir', errno: 'EIO' }],
    ['the creation of the temporary file', 'create', { op: 'open', path: TEMPORARY, errno: 'ENOSPC' }],
    ['the read of the retained lines', 'read', { op: 'read', path: 'events.jsonl', errno: 'EIO' }],
    ['the write of the copy', 'write', { op: 'write', path: TEMPORARY, errno: 'ENOSPC' }],
    ['the sync of the copy', 'fsync', { op: 'fsync', path: TEMPORARY, errno: 'EIO' }],
    ['the close of the copy', 'close', { op: 'close', path: TEMPORARY, errno: 'EIO' }],
    ['the rename over the log', 'rename', { op: 'rename', errno: 'EIO' }],
  ];
  for (const [what, operation, fault] of steps)
    it(`${fault.errno} on ${what}: the compaction is refused naming the operation, the log is unchanged, and appends and a later compaction go on`, async () => {
      const { dir, file, fs, log } = await compactableLog();
      const before = readLinesOf(file);
      fs.inject(fault);
      await expect(log.compact({ now: LATER })).rejects.toMatchObject({ code: 'write_failed', operation });
      expect(fs.fired).toHaveLength(1);
      expect(Buffer.compare(readLinesOf(file), before), 'the log is as it was').toBe(0);
      // The failure removed the temporary file it created: nothing is left for the next replace to find.
      expect(readdirSync(dir).filter((name) => TEMPORARY.test(name))).toEqual([]);
      const last = seqsOf(file).at(-1) as number;
      expect((await log.appendMessage({ role: 'user', content: 'after' })).seq).toBe(last + 1);
      const retried = await log.compact({ now: LATER });
      expect(retried.compacted).toBe(true);
      expect((await log.appendMessage({ role: 'user', content: 'after the retry' })).seq).toBe(last + 2);
      await log.close();
      expect(seqsOf(file).slice(-2)).toEqual([last + 1, last + 2]);
      expect(readdirSync(dir).filter((name) => TEMPORARY.test(name))).toEqual([]);
      const check = await checkStore([file]);
      expect(check.findings.filter((finding) => finding.severity !== 'info')).toEqual([]);
      expect(readFileSync(file, 'utf8')).toContain('"after the retry"');
    });

  it('EIO on the directory sync after the rename: the log was replaced, so the writer refuses appends until reopened', async () => {
    const { file, fs, log } = await compactableLog();
    fs.inject({ op: 'fsyncDirectory', errno: 'EIO' });
    await expect(log.compact({ now: LATER })).rejects.toMatchObject({ operation: 'fsync directory' });
    await expect(log.appendMessage({ role: 'user', content: 'after' })).rejects.toMatchObject({
      code: 'writer_poisoned',
    });
    await log.close();
    const reopened = await openEventLog({ file, clock: steppingClock(T0) });
    await reopened.appendMessage({ role: 'user', content: 'after a reopen' });
    await reopened.close();
    const check = await checkStore([file]);
    expect(check.findings.filter((finding) => finding.severity !== 'info')).toEqual([]);
  });
});

describe('compactEventLog: a failed look at the log is no absent log (issue 34)', () => {
  it('fails with the stat error (EACCES) instead of going on, and says "no event log" only for ENOENT', async () => {
    const { file, log } = await compactableLog();
    await log.close();
    const before = readFileSync(file, 'utf8');
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'stat', path: 'events.jsonl', errno: 'EACCES' }]);
    await expect(compactEventLog(file, { fs, retentionSeconds: 0, now: LATER })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'stat',
      errno: 'EACCES',
    });
    expect(readFileSync(file, 'utf8')).toBe(before);
    await expect(compactEventLog(join(tempDir(), 'events.jsonl'), { retentionSeconds: 0 })).rejects.toMatchObject({
      code: 'invalid_option',
    });
  });
});
