import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { countSetting } from '@turnjournal/test-support';
import { describe, expect, it } from 'vitest';
import { deadPid, type FixtureProcess, startFixture } from '../support/child.js';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { AppendFile, JournalLockedError, nodeFileSystem, openTurnJournal } from '../support/internals.js';
import { eventRecord, readAll } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

interface OpenOutcome {
  readonly ok: boolean;
  readonly tookOverLock?: boolean;
  readonly code?: string;
  readonly message?: string;
  readonly holder?: { pid: number; host: string; token: string };
}

/** Waits for a `hold` child's answer: `ok {…}` or `err {…}`. */
async function outcomeOf(child: FixtureProcess): Promise<OpenOutcome> {
  const line = await child.waitForLine((l) => l.startsWith('ok ') || l.startsWith('err '), 'an open outcome');
  const ok = line.startsWith('ok ');
  return { ok, ...JSON.parse(line.slice(ok ? 3 : 4)) };
}

async function stop(child: FixtureProcess): Promise<void> {
  child.send('exit');
  await child.closed;
}

describe('one writer per file: lock files (spec §11.4)', () => {
  it('a second process gets JournalLockedError naming the file and the holder pid (TJ-DUR-017, TJ-DUR-018)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const writer = await AppendFile.open(file, { durability: 'every' });
    await writer.appendRecord(eventRecord(0));
    const child = startFixture({ op: 'hold', path: file });
    const outcome = await outcomeOf(child);
    await stop(child);
    expect(outcome.ok).toBe(false);
    expect(outcome.code).toBe('journal_locked');
    expect(outcome.message).toContain(file);
    expect(outcome.message).toContain(`pid ${process.pid}`);
    expect(outcome.holder).toMatchObject({ pid: process.pid, host: hostname() });
    // The refused process changed nothing: the holder goes on appending, and its lock is still its own.
    await writer.appendRecord(eventRecord(1));
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).pid).toBe(process.pid);
    await writer.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect((await readAll(file)).records.map((r) => r.value.seq)).toEqual([1, 2]);
  });

  it('a second writer in the same process gets JournalLockedError too (TJ-DUR-018)', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.jsonl');
    const first = await AppendFile.open(file, { durability: 'group' });
    const second = AppendFile.open(file, { durability: 'every' });
    await expect(second).rejects.toBeInstanceOf(JournalLockedError);
    await expect(second).rejects.toMatchObject({ code: 'journal_locked', file, holder: { pid: process.pid } });
    await expect(second).rejects.toThrow(`${file} is locked by pid ${process.pid}`);
    await first.appendRecord(eventRecord(0));
    await first.close();
    const again = await AppendFile.open(file, { durability: 'every' });
    expect(again.opened.tookOverLock).toBe(false);
    await again.close();

    const journal = await openTurnJournal({ dir, sessionId: 's1' });
    await expect(openTurnJournal({ dir, sessionId: 's1' })).rejects.toMatchObject({
      code: 'journal_locked',
      holder: { pid: process.pid },
    });
    // Another shard of the same session has its own file and lock.
    const shard = await openTurnJournal({ dir, sessionId: 's1', shard: 'w2' });
    await Promise.all([journal.close(), shard.close()]);
  });

  // A close that cannot remove its lock (EIO on the unlink, or on the read that checks the token) leaves a lock naming
  // this running process. Before, every later open of the file in this process failed with journal_locked ("the holder
  // is running": itself) until the process exited. The process knows that lock is dead: it abandoned it.
  for (const op of ['unlink', 'readFile'] as const)
    it(`a lock this process failed to remove on close (EIO on ${op}) is taken over by its next open, and only by it (TJ-DUR-019, TJ-DUR-026)`, async () => {
      const dir = tempDir();
      const fs = faultyFileSystem(nodeFileSystem);
      const journal = await openTurnJournal({ dir, sessionId: 's1', fs });
      await journal.submit({ content: 'hello', turnId: 't1' });
      fs.inject({ op, path: /s1\.jsonl\.lock$/, errno: 'EIO' });
      await journal.close();
      expect(fs.fired).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(dir, 's1.jsonl.lock'), 'utf8')).pid, 'the lock was left').toBe(process.pid);
      const reopened = await openTurnJournal({ dir, sessionId: 's1' });
      expect(reopened.opened.tookOverLock).toBe(true);
      expect(reopened.stateOf('t1')).toBe('submitted');
      // The lock it holds now is a live one: a second writer is refused as ever.
      await expect(openTurnJournal({ dir, sessionId: 's1' })).rejects.toMatchObject({ code: 'journal_locked' });
      await reopened.workerStarted('t1');
      await reopened.close();
      expect(existsSync(join(dir, 's1.jsonl.lock'))).toBe(false);
    });

  it('a lock left by a SIGKILLed process is detected and taken over (TJ-DUR-019)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const child = startFixture({ op: 'hold', path: file });
    expect(await outcomeOf(child)).toMatchObject({ ok: true, tookOverLock: false });
    // While it runs, it holds the file.
    await expect(AppendFile.open(file, { durability: 'every' })).rejects.toMatchObject({
      code: 'journal_locked',
      holder: { pid: child.pid },
    });
    child.kill();
    await child.closed;
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).pid).toBe(child.pid);
    const writer = await AppendFile.open(file, { durability: 'every' });
    expect(writer.opened.tookOverLock).toBe(true);
    expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).pid).toBe(process.pid);
    await writer.appendRecord(eventRecord(0));
    await writer.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('never takes over a lock naming another host or one it cannot read (TJ-DUR-020)', async () => {
    const dead = await deadPid();
    const cases: [string, string][] = [
      ['another host', JSON.stringify({ pid: dead, host: 'elsewhere.invalid', token: 'feed' })],
      ['unreadable JSON', '{"pid": 12, "host": '],
      ['an empty lock file', ''],
      ['a pid that is not a number', JSON.stringify({ pid: String(dead), host: hostname(), token: 'feed' })],
      ['no host', JSON.stringify({ pid: dead, token: 'feed' })],
      ['not an object', '[1,2]'],
    ];
    for (const [what, text] of cases) {
      const dir = tempDir();
      const file = join(dir, 'events.jsonl');
      writeFileSync(`${file}.lock`, text);
      const open = AppendFile.open(file, { durability: 'every' });
      await expect(open, what).rejects.toMatchObject({ code: 'journal_locked', file });
      await expect(open, what).rejects.toThrow(file);
      expect(readFileSync(`${file}.lock`, 'utf8'), `${what}: the lock is left as it was`).toBe(text);
      expect(readdirSync(dir).sort(), `${what}: nothing else was created`).toEqual(['events.jsonl.lock']);
    }
    // The control: the same lock naming this host and the dead pid is taken over.
    const file = join(tempDir(), 'events.jsonl');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: dead, host: hostname(), token: 'feed' }));
    const writer = await AppendFile.open(file, { durability: 'every' });
    expect(writer.opened.tookOverLock).toBe(true);
    await writer.close();
  });

  it('concurrent opens in one process racing over a stale lock: exactly one wins, many rounds (TJ-DUR-019)', {
    timeout: 60_000,
  }, async () => {
    const dead = await deadPid();
    const rounds = countSetting('TJ_LOCK_ROUNDS', 3) * 10;
    for (let round = 0; round < rounds; round++) {
      const file = join(tempDir(), 'events.jsonl');
      writeFileSync(`${file}.lock`, JSON.stringify({ pid: dead, host: hostname(), token: 'stale' }));
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () => AppendFile.open(file, { durability: 'every' })),
      );
      const winners = results.filter((r) => r.status === 'fulfilled');
      expect(winners, `round ${round}`).toHaveLength(1);
      for (const result of results)
        if (result.status === 'rejected')
          expect(result.reason, `round ${round}`).toMatchObject({ code: 'journal_locked' });
      const writer = (winners[0] as PromiseFulfilledResult<AppendFile>).value;
      await writer.appendRecord(eventRecord(0));
      await writer.close();
      expect(readdirSync(join(file, '..')), `round ${round}`).toEqual(['events.jsonl']);
    }
  });

  const raceRounds = countSetting('TJ_LOCK_ROUNDS', 3);
  const racers = 4;
  it(`${racers} processes racing to take over one stale lock: exactly one wins, the others get journal_locked, ${raceRounds} rounds (TJ-DUR-019)`, {
    timeout: 60_000,
  }, async () => {
    for (let round = 0; round < raceRounds; round++) {
      const dir = tempDir();
      const file = join(dir, 'events.jsonl');
      // A stale lock, as a SIGKILLed writer leaves it (that case is shown above): this host, a pid that is gone.
      writeFileSync(file, '');
      writeFileSync(`${file}.lock`, JSON.stringify({ pid: await deadPid(), host: hostname(), token: `dead${round}` }));

      const children = Array.from({ length: racers }, () => startFixture({ op: 'hold', path: file, waitGo: true }));
      await Promise.all(children.map((child) => child.waitForLine((line) => line === 'waiting', 'waiting')));
      for (const child of children) child.send('go');
      const outcomes = await Promise.all(children.map(outcomeOf));
      const where = `round ${round}: ${JSON.stringify(outcomes)}`;
      const winners = children.filter((_, i) => outcomes[i]?.ok === true);
      expect(winners.length, where).toBe(1);
      const winner = winners[0] as FixtureProcess;
      // The winner need not be the racer that removed the stale lock: another may have removed it and then lost the
      // O_EXCL creation to this one (which then created a fresh lock and reports no take-over). Either way one holder.
      for (const outcome of outcomes.filter((o) => !o.ok)) {
        expect(outcome.code, where).toBe('journal_locked');
        // A loser saw either the winner's lock or a lock file still being written (no holder yet).
        if (outcome.holder !== undefined) expect(outcome.holder.pid, where).toBe(winner.pid);
      }
      expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).pid, where).toBe(winner.pid);
      await Promise.all(children.map(stop));
      expect(readdirSync(dir), `${where}: the winner released its lock and no take-over lock is left`).toEqual([
        'events.jsonl',
      ]);
    }
  });
});
