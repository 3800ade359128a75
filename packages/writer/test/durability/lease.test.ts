// The lease and the fencing of a lock (spec §11.4): a holder in another PID namespace is judged by its lease, watched
// on this process's monotonic clock before a take-over (TJ-DUR-039); a take-over of an expired lease gives the file a
// new inode (TJ-DUR-041); a writer whose lock changed hands acknowledges nothing more (TJ-DUR-040).
import { readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { currentBootId, currentPidNamespace } from '@turnjournal/reader/store-format';
import { describe, expect, it } from 'vitest';
import { AppendFile, acquireLock, nodeFileSystem } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const LEASE_MS = 300;
const line = (n: number) => new TextEncoder().encode(`{"n":${n}}\n`);

/** Plants the lock of a writer of another PID namespace of this machine, last renewed `agoMs` ago. */
function plantForeignLock(file: string, agoMs: number, pid = 4_194_304 + 1000): void {
  const bootId = currentBootId();
  const holder = { pid, host: hostname(), token: 'foreign', pid_ns: 'pid:[1]', lease_ms: LEASE_MS };
  writeFileSync(`${file}.lock`, JSON.stringify(bootId === null ? holder : { ...holder, boot_id: bootId }));
  const at = new Date(Date.now() - agoMs);
  utimesSync(`${file}.lock`, at, at);
}

describe('the lease of a lock held in another PID namespace (TJ-DUR-038, TJ-DUR-039)', () => {
  it('is watched, not trusted to the wall clock: a holder that renews while watched keeps its lock', async () => {
    const file = join(tempDir(), 'events.jsonl');
    // Renewed "an hour ago" by the wall clock (a clock step forward looks the same), but the holder runs and renews.
    plantForeignLock(file, 3_600_000);
    const renewing = setInterval(() => {
      const now = new Date();
      utimesSync(`${file}.lock`, now, now);
    }, LEASE_MS / 5);
    try {
      await expect(acquireLock(nodeFileSystem, `${file}.lock`, file)).rejects.toMatchObject({ code: 'journal_locked' });
    } finally {
      clearInterval(renewing);
    }
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).token).toBe('foreign');
  });

  it('is taken over once it was watched for a whole lease without a renewal, and the file gets a new inode', async () => {
    const file = join(tempDir(), 'events.jsonl');
    writeFileSync(file, '{"n":0}\n');
    const before = statSync(file).ino;
    plantForeignLock(file, 3_600_000, process.pid);
    const started = performance.now();
    const appender = await AppendFile.open(file, { durability: 'every', lock: { leaseMs: LEASE_MS } });
    expect(performance.now() - started, 'the take-over waited for a whole lease').toBeGreaterThanOrEqual(LEASE_MS);
    expect(appender.opened.tookOverLock).toBe(true);
    expect(statSync(file).ino).not.toBe(before);
    await appender.appendLine(line(1));
    await appender.close();
    expect(readFileSync(file, 'utf8')).toBe('{"n":0}\n{"n":1}\n');
  });

  it('with a fresh lease, refuses at once', async () => {
    const file = join(tempDir(), 'events.jsonl');
    plantForeignLock(file, 0);
    await expect(AppendFile.open(file, { durability: 'every' })).rejects.toMatchObject({ code: 'journal_locked' });
  });
});

describe('the lock a writer takes (TJ-DUR-042, TJ-DUR-038)', () => {
  it('names its PID namespace and its lease, and renews the lease while it holds the lock', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const appender = await AppendFile.open(file, { durability: 'every', lock: { leaseMs: 100 } });
    const holder = JSON.parse(readFileSync(`${file}.lock`, 'utf8'));
    expect(holder).toMatchObject({ pid: process.pid, pid_ns: currentPidNamespace() ?? undefined, lease_ms: 100 });
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    // Renewed every fifth of the lease: give it ten leases' time before calling the renewal missing (a hang guard).
    const deadline = Date.now() + 1000;
    const renewed = () => statSync(`${file}.lock`).mtimeMs > old.getTime() + 30_000;
    while (!renewed() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(renewed(), 'the lock file’s modification time was set again').toBe(true);
    await appender.close();
  });
});

describe('a writer whose lock changed hands (TJ-DUR-040)', () => {
  const hows = [
    'replaced by a rename',
    'removed and created again (its inode number reused)',
    // The writer read the lock once its change time was settled, and trusts that change time since: a lock created
    // again has a later one.
    'removed and created again after a look that trusted it',
  ] as const;
  for (const how of hows)
    it(`acknowledges nothing more once its lock was ${how}`, async () => {
      const file = join(tempDir(), 'events.jsonl');
      const appender = await AppendFile.open(file, { durability: 'every' });
      if (how === 'removed and created again after a look that trusted it')
        await new Promise((resolve) => setTimeout(resolve, 250));
      await appender.appendLine(line(1));
      const taker = JSON.stringify({ pid: process.pid, host: hostname(), token: 'taker' });
      if (how === 'replaced by a rename') {
        writeFileSync(`${file}.lock.new`, taker);
        renameSync(`${file}.lock.new`, `${file}.lock`);
      } else {
        unlinkSync(`${file}.lock`);
        writeFileSync(`${file}.lock`, taker);
      }
      await expect(appender.appendLine(line(2))).rejects.toMatchObject({ code: 'journal_fenced' });
      await expect(appender.appendLine(line(3))).rejects.toMatchObject({ code: 'writer_poisoned' });
      expect(appender.poisoned).toBe(true);
      await appender.close();
      // Its close leaves the taker's lock alone (TJ-DUR-026).
      expect(readFileSync(`${file}.lock`, 'utf8')).toBe(taker);
    });
});
