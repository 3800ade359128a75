import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import {
  AppendFile,
  nodeFileSystem,
  openTurnJournal,
  SWEEP_LOCK_NAME,
  sweepStoreTurnJournals,
  sweepTurnJournals,
} from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const HOUR = 3600 * 1000;
const NOW = Date.parse('2026-11-22T12:00:00Z');

/** Session `s` with one turn completed `ageHours` ago (three days: the sweep prunes it) in shard `a`. */
async function store(ageHours = 72): Promise<string> {
  const dir = join(tempDir(), '_turn_journal');
  const journal = await openTurnJournal({ dir, sessionId: 's', shard: 'a', clock: () => NOW - ageHours * HOUR });
  await journal.submit({ content: 'old and done', turnId: 'old' });
  await journal.complete('old');
  await journal.close();
  return dir;
}

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Only ENOENT (and ENOTDIR) may tell the sweep that a file is gone or a directory empty: any other failure of a
 * listing or a `stat` fails the sweep with the path and errno, instead of a sweep that quietly prunes nothing.
 */
describe('sweepTurnJournals: failures it must not take for an empty directory or a gone file (TJ-RET-020)', () => {
  it('fails on a listing of its directory that fails with EIO, even with nothing to prune', async () => {
    // Nothing to prune: the listing that looks for a crashed sweep's temporary files is the only one the sweep makes.
    const dir = await store(1);
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'readdir', path: dir, errno: 'EIO', times: Infinity }]);
    await expect(sweepTurnJournals(dir, { clock: () => NOW, fs })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'readdir',
      errno: 'EIO',
      file: dir,
    });
  });

  it('fails on a stat of a journal that fails with EACCES, and prunes nothing', async () => {
    const dir = await store();
    const before = readFileSync(join(dir, 's~a.jsonl'), 'utf8');
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'stat', path: 's~a.jsonl', errno: 'EACCES' }]);
    await expect(sweepTurnJournals(dir, { clock: () => NOW, fs })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'stat',
      errno: 'EACCES',
      file: join(dir, 's~a.jsonl'),
    });
    expect(readFileSync(join(dir, 's~a.jsonl'), 'utf8')).toBe(before);
  });

  it('skips a session whose journal is gone since the listing (ENOENT)', async () => {
    const dir = await store();
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'stat', path: 's~a.jsonl', errno: 'ENOENT' }]);
    const report = await sweepTurnJournals(dir, { clock: () => NOW, fs });
    expect(report.sessions).toMatchObject([{ sessionId: 's', prunedTurnIds: [] }]);
    expect(report.sessions[0]?.skipped).toMatch(/changed during the sweep/);
  });

  it('fails when a journal it rewrote fails to close (its lock may be left behind), after the rewrite', async () => {
    const dir = await store();
    vi.spyOn(AppendFile.prototype, 'close').mockRejectedValueOnce(
      Object.assign(new Error('fsync on close failed: EIO'), { code: 'write_failed' }),
    );
    await expect(sweepTurnJournals(dir, { clock: () => NOW })).rejects.toMatchObject({ code: 'write_failed' });
    expect(readFileSync(join(dir, 's~a.jsonl'), 'utf8')).not.toContain('"old and done"');
  });

  it('removes a take-over temporary of its lock that a killed sweep left behind', async () => {
    const dir = await store();
    const leftover = `.${SWEEP_LOCK_NAME}.takeover.0123456789ab.tmp`;
    writeFileSync(join(dir, leftover), '{"pid":1}');
    await sweepTurnJournals(dir, { clock: () => NOW });
    expect(readdirSync(dir)).not.toContain(leftover);
  });

  it('finds nothing to sweep in a store whose turn-journal directory does not exist yet', async () => {
    const root = tempDir();
    const report = await sweepStoreTurnJournals(root, { clock: () => NOW });
    expect(report).toEqual({ dir: join(root, '_turn_journal'), sessions: [], dryRun: false });
  });

  it('fails when the stat of the turn-journal directory fails otherwise (EACCES)', async () => {
    const root = tempDir();
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'stat', path: '_turn_journal', errno: 'EACCES' }]);
    await expect(sweepStoreTurnJournals(root, { clock: () => NOW, fs })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'stat',
      errno: 'EACCES',
    });
  });
});
