// Coverage of the single-writer lock rules (spec §11.4) against the reference writer.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { currentBootId, lockStatusOf } from '@turnjournal/reader/store-format';
import { describe, expect, it } from 'vitest';
import { acquireLock, JournalLockedError, nodeFileSystem, openTurnJournal } from '../support/internals.js';
import { tempDir } from '../support/temp.js';
import { TraceFileSystem } from './trace-fs.js';

const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

describe('lock files (spec §11.4)', () => {
  it('removes its lock file on close, and leaves a lock file that no longer holds its token (TJ-DUR-026)', async () => {
    const dir = tempDir();
    const file = join(dir, 's.jsonl');
    const first = await openTurnJournal({ dir, sessionId: 's' });
    const mine = JSON.parse(readFileSync(`${file}.lock`, 'utf8')) as { token: string; pid: number };
    expect(mine.token).toMatch(/^[0-9a-f]{32}$/);
    await first.close();
    expect(existsSync(`${file}.lock`)).toBe(false);

    // Another writer took the lock over (as if this one had been presumed dead): closing must not remove its lock.
    const second = await openTurnJournal({ dir, sessionId: 's' });
    const other = { ...JSON.parse(readFileSync(`${file}.lock`, 'utf8')), token: 'f'.repeat(32) };
    writeFileSync(`${file}.lock`, JSON.stringify(other));
    await second.close();
    expect(existsSync(`${file}.lock`)).toBe(true);
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).token).toBe(other.token);

    // The same holds for a bare lock.
    const path = join(dir, 'bare.lock');
    const lock = await acquireLock(nodeFileSystem, path, join(dir, 'bare'));
    writeFileSync(path, JSON.stringify({ ...lock.holder, token: 'e'.repeat(32) }));
    await lock.release();
    expect(existsSync(path)).toBe(true);
    const own = await acquireLock(nodeFileSystem, join(dir, 'own.lock'), join(dir, 'own'));
    await own.release();
    expect(existsSync(join(dir, 'own.lock'))).toBe(false);
  });

  it.runIf(existsSync(BOOT_ID_FILE))(
    'records the boot id in its lock, so that a lock from before a reboot is stale even if its pid runs (TJ-DUR-027)',
    async () => {
      const dir = tempDir();
      const journal = await openTurnJournal({ dir, sessionId: 's' });
      const text = readFileSync(join(dir, 's.jsonl.lock'), 'utf8');
      const bootId = readFileSync(BOOT_ID_FILE, 'utf8').trim();
      expect(JSON.parse(text).boot_id).toBe(bootId);
      expect(currentBootId()).toBe(bootId);
      expect(lockStatusOf(text)).toBe('live');
      // The same holder (this live pid) from another boot is stale: the boot id is what tells them apart.
      expect(lockStatusOf(JSON.stringify({ ...JSON.parse(text), boot_id: 'another-boot' }))).toBe('stale');
      await journal.close();
    },
  );
});

describe('stale locks are removed only by the take-over protocol (spec §11.4)', () => {
  const deadHolder = () => JSON.stringify({ pid: 2 ** 31 - 2, host: hostname(), token: 'd'.repeat(32) });

  it('leaves a stale lock in place while another process holds the take-over lock (TJ-DUR-025)', async () => {
    const dir = tempDir();
    const path = join(dir, 'j.jsonl.lock');
    const stale = deadHolder();
    writeFileSync(path, stale);
    expect(lockStatusOf(stale)).toBe('stale');
    // A live process (this one) is in the middle of its own take-over.
    const breaker = await acquireLock(nodeFileSystem, `${path}.takeover`, join(dir, 'j.jsonl'));
    await expect(
      acquireLock(nodeFileSystem, path, join(dir, 'j.jsonl'), { takeoverAttempts: 3 }),
    ).rejects.toBeInstanceOf(JournalLockedError);
    expect(readFileSync(path, 'utf8')).toBe(stale);
    await breaker.release();
    // Once the take-over lock is free, the stale lock is taken over.
    const lock = await acquireLock(nodeFileSystem, path, join(dir, 'j.jsonl'));
    expect(lock.tookOver).toBe(true);
    await lock.release();
  });

  it('re-reads the lock under the take-over lock and never removes one that a new holder took meanwhile (TJ-DUR-025)', async () => {
    const dir = tempDir();
    const path = join(dir, 'j.jsonl.lock');
    writeFileSync(path, deadHolder());
    const fresh = JSON.stringify({ pid: process.pid, host: hostname(), token: 'a'.repeat(32) });
    const fs = new TraceFileSystem();
    let swapped = false;
    // Right after this writer created its take-over lock, another writer replaces the stale lock with its own.
    fs.before = (op, target) => {
      if (!swapped && op === 'readFile' && target === path && existsSync(`${path}.takeover`)) {
        swapped = true;
        writeFileSync(path, fresh);
      }
    };
    await expect(acquireLock(fs, path, join(dir, 'j.jsonl'), { takeoverAttempts: 3 })).rejects.toBeInstanceOf(
      JournalLockedError,
    );
    expect(swapped).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe(fresh);
    expect(fs.calls.filter((c) => c.op === 'unlink' && c.path === path)).toEqual([]);
  });

  it('when many writers find one stale lock at once, exactly one acquires it, over many rounds (TJ-DUR-025)', async () => {
    const dir = tempDir();
    const path = join(dir, 'j.jsonl.lock');
    for (let round = 0; round < 20; round++) {
      writeFileSync(path, deadHolder());
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () => acquireLock(nodeFileSystem, path, join(dir, 'j.jsonl'))),
      );
      const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(winners).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(JournalLockedError);
      expect(JSON.parse(readFileSync(path, 'utf8')).token).toBe(winners[0]?.holder.token);
      await winners[0]?.release();
    }
  });
});
