import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { countSetting, seededRandom, suiteSeed } from '@turnjournal/test-support';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import {
  type AppendAck,
  AppendFile,
  encodeRecord,
  JournalWriteError,
  nodeFileSystem,
  openTurnJournal,
  WriterPoisonedError,
} from '../support/internals.js';
import { eventRecord, readAll } from '../support/journal.js';
import { readLinesOf } from '../support/space.js';
import { tempDir } from '../support/temp.js';

function journalPath(): string {
  return join(tempDir('tj-faults-'), 'events.jsonl');
}

/** The record numbers (seq - 1) in the file, in file order. */
async function numbersIn(file: string): Promise<number[]> {
  return (await readAll(file)).records.map((record) => (record.value.seq as number) - 1);
}

function settledCodes(results: readonly PromiseSettledResult<unknown>[]): string[] {
  return results.map((result) =>
    result.status === 'fulfilled' ? 'ok' : String((result.reason as { code?: unknown }).code),
  );
}

describe('injected write faults: ENOSPC and EIO (spec §11.5)', () => {
  for (const errno of ['ENOSPC', 'EIO']) {
    for (const durability of ['every', 'group'] as const) {
      it(`${errno} on write in ${durability} mode rejects with write_failed naming file, operation and errno; the partial line is truncated away and the next append succeeds (TJ-DUR-022, TJ-DUR-023)`, async () => {
        const file = journalPath();
        const fs = faultyFileSystem(nodeFileSystem);
        const writer = await AppendFile.open(file, { durability, fs });
        await writer.appendRecord(eventRecord(0));
        await writer.appendRecord(eventRecord(1));
        // Where the lines end: the file is longer while the writer holds it, by its pre-allocated space (spec §3.8).
        const before = writer.size;
        // Half the line lands, then the disk is full / failing: a partial line is on disk when the error comes.
        fs.inject({ op: 'write', path: file, short: true }, { op: 'write', path: file, nth: 2, errno });
        const failure = await writer.appendRecord(eventRecord(2, 'lost '.repeat(40))).catch((error: unknown) => error);
        expect(fs.fired.map((f) => f.fault.errno ?? 'short')).toEqual(['short', errno]);
        expect(failure).toBeInstanceOf(JournalWriteError);
        expect(failure).toMatchObject({ code: 'write_failed', file, operation: 'write', errno });
        expect((failure as Error).message).toContain(file);
        expect((failure as Error).message).toContain(errno);
        expect(statSync(file).size, 'the partial line was truncated away, and the space with it').toBe(before);
        expect(writer.poisoned).toBe(false);
        expect(writer.size).toBe(before);
        await writer.appendRecord(eventRecord(3));
        await writer.close();
        expect(await numbersIn(file)).toEqual([0, 1, 3]);
        expect((await readAll(file)).findings).toEqual([]);
      });
    }
  }

  it('in group mode a failed write rejects every append of its batch, and the appends after it succeed (TJ-DUR-022, TJ-DUR-023)', async () => {
    const file = journalPath();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'group', fs });
    // The first append is written alone; the next 20 queue behind it and are written as one batch: fail that write.
    fs.inject({ op: 'write', path: file, nth: 2, short: true }, { op: 'write', path: file, nth: 3, errno: 'ENOSPC' });
    const results = await Promise.allSettled(Array.from({ length: 21 }, (_, n) => writer.appendRecord(eventRecord(n))));
    expect(settledCodes(results)).toEqual(['ok', ...Array(20).fill('write_failed')]);
    const reasons = results.slice(1).map((r) => (r as PromiseRejectedResult).reason);
    expect(new Set(reasons).size, 'one error for the whole batch').toBe(1);
    expect(reasons[0]).toMatchObject({ operation: 'write', errno: 'ENOSPC', file });
    const acks = await Promise.all([21, 22, 23].map((n) => writer.appendRecord(eventRecord(n))));
    expect(acks[0]?.cursor, 'the next append starts where the acknowledged data ends').toBe(
      (results[0] as PromiseFulfilledResult<AppendAck>).value.length,
    );
    await writer.close();
    expect(await numbersIn(file)).toEqual([0, 21, 22, 23]);
  });

  it('a write that returns 0 bytes is a failure, not an endless loop (TJ-DUR-002, TJ-DUR-022)', async () => {
    const file = journalPath();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    await writer.appendRecord(eventRecord(0));
    fs.inject({ op: 'write', path: file, short: true }, { op: 'write', path: file, nth: 2, short: () => 0 });
    await expect(writer.appendRecord(eventRecord(1))).rejects.toMatchObject({ code: 'write_failed', errno: 'EIO' });
    await writer.appendRecord(eventRecord(2));
    await writer.close();
    expect(await numbersIn(file)).toEqual([0, 2]);
  });

  for (const durability of ['every', 'group'] as const) {
    it(`short writes are repeated until the whole line is written, in ${durability} mode (TJ-DUR-002)`, async () => {
      const file = journalPath();
      // Every write of the journal moves at most 3 bytes.
      const fs = faultyFileSystem(nodeFileSystem, [
        { op: 'write', path: file, times: Number.POSITIVE_INFINITY, short: (length) => Math.min(length, 3) },
      ]);
      const writer = await AppendFile.open(file, { durability, fs });
      const records = Array.from({ length: 12 }, (_, n) => eventRecord(n, `${n}:${'é'.repeat(n * 50)}`));
      await Promise.all(records.map((record) => writer.appendRecord(record)));
      await writer.close();
      const expectedBytes = records.reduce((sum, record) => sum + encodeRecord(record).length, 0);
      expect(statSync(file).size).toBe(expectedBytes);
      expect(fs.fired.length).toBeGreaterThanOrEqual(Math.ceil(expectedBytes / 3));
      const read = await readAll(file);
      expect(read.records.map((record) => record.value)).toEqual(records);
      expect(read.findings).toEqual([]);
    });
  }
});

describe('injected sync faults: a failed fdatasync poisons the writer (spec §11.5)', () => {
  it('every mode: the failed append rejects with write_failed, every later append with writer_poisoned, until reopened (TJ-DUR-021)', async () => {
    const file = journalPath();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    await writer.appendRecord(eventRecord(0));
    fs.inject({ op: 'fdatasync', path: file, errno: 'EIO' });
    await expect(writer.appendRecord(eventRecord(1))).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'fdatasync',
      errno: 'EIO',
      file,
    });
    expect(writer.poisoned).toBe(true);
    for (let n = 2; n < 5; n++) {
      const refusal = writer.appendRecord(eventRecord(n));
      await expect(refusal).rejects.toBeInstanceOf(WriterPoisonedError);
      await expect(refusal).rejects.toMatchObject({ code: 'writer_poisoned', file });
    }
    await expect(writer.flush()).rejects.toMatchObject({ code: 'writer_poisoned' });
    // The fault is gone, but the writer stays poisoned: the kernel may have dropped the pages the sync failed on.
    await expect(writer.appendRecord(eventRecord(5))).rejects.toMatchObject({ code: 'writer_poisoned' });
    await writer.close();
    expect(existsSync(`${file}.lock`), 'closing a poisoned writer releases its lock').toBe(false);

    const reopened = await AppendFile.open(file, { durability: 'every' });
    expect(reopened.poisoned).toBe(false);
    await reopened.appendRecord(eventRecord(6));
    await reopened.close();
    const numbers = await numbersIn(file);
    // Record 1 was written before its sync failed: it may survive (it was never acknowledged). 2..5 were never written.
    expect([
      [0, 6],
      [0, 1, 6],
    ]).toContainEqual(numbers);
  });

  it('group mode: the batch whose sync fails rejects with write_failed, and appends queued behind it with writer_poisoned (TJ-DUR-014, TJ-DUR-021)', async () => {
    const file = journalPath();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'group', fs });
    let queuedBehind: Promise<AppendAck>[] = [];
    // Batch 1 = append 0 alone (synced), batch 2 = appends 1..63 (its sync fails); while that sync is in flight,
    // appends 64..79 are queued behind it.
    fs.inject({
      op: 'fdatasync',
      path: file,
      nth: 2,
      errno: 'EIO',
      before: () => {
        queuedBehind = Array.from({ length: 16 }, (_, i) => writer.appendRecord(eventRecord(64 + i)));
      },
    });
    const first = await Promise.allSettled(Array.from({ length: 64 }, (_, n) => writer.appendRecord(eventRecord(n))));
    const behind = await Promise.allSettled(queuedBehind);
    expect(settledCodes(first)).toEqual(['ok', ...Array(63).fill('write_failed')]);
    expect((first[1] as PromiseRejectedResult).reason).toMatchObject({ operation: 'fdatasync', errno: 'EIO' });
    expect(behind).toHaveLength(16);
    expect(settledCodes(behind)).toEqual(Array(16).fill('writer_poisoned'));
    await expect(writer.appendRecord(eventRecord(99))).rejects.toMatchObject({ code: 'writer_poisoned' });
    await writer.close();

    const reopened = await AppendFile.open(file, { durability: 'group' });
    await reopened.appendRecord(eventRecord(100));
    await reopened.close();
    const numbers = await numbersIn(file);
    // Record 0 was acknowledged; 1..63 were written before their sync failed and may survive; nothing queued behind
    // the failure was written.
    expect(numbers[0]).toBe(0);
    expect(numbers.at(-1)).toBe(100);
    expect(numbers.slice(0, -1)).toEqual(Array.from({ length: numbers.length - 1 }, (_, i) => i));
    expect(numbers.length - 2).toBeLessThanOrEqual(63);
  });

  it('a failed fsync on close of a none-mode file rejects close and still releases the lock (TJ-DUR-015, TJ-DUR-021)', async () => {
    const file = journalPath();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    await writer.appendRecord(eventRecord(0));
    fs.inject({ op: 'fsync', path: file, errno: 'EIO' });
    await expect(writer.close()).rejects.toMatchObject({ code: 'write_failed', operation: 'fsync on close' });
    expect(existsSync(`${file}.lock`)).toBe(false);
    const reopened = await AppendFile.open(file, { durability: 'none' });
    expect(reopened.opened.tookOverLock).toBe(false);
    await reopened.close();
  });

  it('a failed ftruncate after a failed write poisons the writer; the reopen repairs the partial line (TJ-DUR-023, TJ-DUR-005)', async () => {
    const file = journalPath();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    await writer.appendRecord(eventRecord(0));
    const committed = writer.size;
    fs.inject(
      { op: 'write', path: file, short: true },
      { op: 'write', path: file, nth: 2, errno: 'EIO' },
      { op: 'ftruncate', path: file, errno: 'EIO' },
    );
    const lostLine = encodeRecord(eventRecord(1, 'partial '.repeat(30)));
    await expect(writer.appendRecord(eventRecord(1, 'partial '.repeat(30)))).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'write',
    });
    expect(writer.poisoned).toBe(true);
    await expect(writer.appendRecord(eventRecord(2))).rejects.toMatchObject({ code: 'writer_poisoned' });
    await writer.close();
    // The half line, then the space it was written into: a poisoned writer leaves the file as it is.
    const partial = readLinesOf(file).subarray(committed);
    expect(partial.length).toBe(Math.floor(lostLine.length / 2));

    const reopened = await AppendFile.open(file, { durability: 'every' });
    expect(reopened.opened.tornTail).toEqual({
      length: partial.length,
      quarantine: `${file}.${committed}.torn`,
    });
    expect(
      Buffer.from(readFileSync(`${file}.${committed}.torn`)).equals(Buffer.from(lostLine.subarray(0, partial.length))),
    ).toBe(true);
    await reopened.appendRecord(eventRecord(3));
    await reopened.close();
    expect(await numbersIn(file)).toEqual([0, 3]);
    expect((await checkStore([file])).findings.filter((finding) => finding.severity === 'error')).toEqual([]);
  });
});

describe('nothing acknowledged is ever lost under random faults (TJ-DUR-022, TJ-DUR-024)', () => {
  const seed = suiteSeed();
  const steps = countSetting('TJ_FAULT_STEPS', 300);
  console.log(`[durability] random fault suite: seed=${seed} steps=${steps} (TJ_CRASH_SEED / TJ_FAULT_STEPS)`);
  for (const durability of ['every', 'group'] as const) {
    it(`${durability} mode, ${steps} appends with random ENOSPC, EIO, short writes and failed syncs (seed ${seed})`, async () => {
      const random = seededRandom(seed);
      const where = `seed=${seed} (replay: TJ_CRASH_SEED=${seed}) durability=${durability}`;
      const file = journalPath();
      const fs = faultyFileSystem(nodeFileSystem);
      let writer = await AppendFile.open(file, { durability, fs });
      const acked: number[] = [];
      let reopens = 0;
      let next = 0;
      while (next < steps) {
        const roll = random.next();
        if (roll < 0.08) fs.inject({ op: 'write', path: file, errno: random.pick(['ENOSPC', 'EIO']) });
        else if (roll < 0.14)
          fs.inject({ op: 'write', path: file, short: true }, { op: 'write', path: file, nth: 2, errno: 'ENOSPC' });
        else if (roll < 0.2) fs.inject({ op: 'write', path: file, short: true, times: random.int(1, 4) });
        else if (roll < 0.24) fs.inject({ op: 'fdatasync', path: file, errno: 'EIO' });
        else if (roll < 0.26)
          fs.inject(
            { op: 'write', path: file, short: true },
            { op: 'write', path: file, nth: 2, errno: 'EIO' },
            { op: 'ftruncate', path: file, errno: 'EIO' },
          );
        const width = durability === 'group' ? random.int(1, 16) : 1;
        const batch = Array.from({ length: Math.min(width, steps - next) }, () => next++);
        const results = await Promise.allSettled(batch.map((n) => writer.appendRecord(eventRecord(n))));
        results.forEach((result, i) => {
          if (result.status === 'fulfilled') acked.push(batch[i] as number);
          // append_cancelled: queued behind a failed write, never attempted (TJ-DUR-030).
          else
            expect(['write_failed', 'writer_poisoned', 'append_cancelled'], `${where}: step ${batch[i]}`).toContain(
              (result.reason as { code?: string }).code,
            );
        });
        fs.clear();
        if (writer.poisoned) {
          await writer.close();
          writer = await AppendFile.open(file, { durability, fs });
          reopens += 1;
        }
      }
      await writer.close();
      const numbers = await numbersIn(file);
      expect(
        acked.filter((n) => !numbers.includes(n)),
        `${where}: acknowledged records lost`,
      ).toEqual([]);
      expect(new Set(numbers).size, `${where}: no record is duplicated`).toBe(numbers.length);
      expect(numbers, `${where}: records are in call order`).toEqual([...numbers].sort((a, b) => a - b));
      expect((await readAll(file)).findings, `${where}: no damage is left`).toEqual([]);
      expect(acked.length, `${where}: most appends succeed (${reopens} reopens)`).toBeGreaterThan(steps / 2);
    });
  }
});

describe('a failure while opening leaves no lock behind', () => {
  const reopenWorks = async (file: string) => {
    const writer = await AppendFile.open(file, { durability: 'every' });
    expect(writer.opened.tookOverLock, 'no stale lock was left to take over').toBe(false);
    await writer.appendRecord(eventRecord(9));
    await writer.close();
  };

  // A failed open fired its one fault and left neither the lock nor a temporary file behind.
  const expectOneFaultAndNothingLeft = (fs: { fired: readonly unknown[] }, file: string) => {
    expect(fs.fired).toHaveLength(1);
    expect(existsSync(`${file}.lock`), 'no lock file is left').toBe(false);
    expect(
      readdirSync(join(file, '..')).filter((name) => name.endsWith('.tmp')),
      'no temporary file is left',
    ).toEqual([]);
  };

  const creationFaults: [string, Parameters<typeof faultyFileSystem>[1]][] = [
    ['the fsync of the new file', [{ op: 'fsync', path: /events\.jsonl$/ }]],
    ['the directory fsync after creating the file', [{ op: 'fsyncDirectory', nth: 2 }]],
    ['the directory fsync after creating the lock file', [{ op: 'fsyncDirectory', nth: 1 }]],
    ['the write of the lock file', [{ op: 'write', path: /\.lock\.[0-9a-f]+\.tmp$/, errno: 'ENOSPC' }]],
    ['the fsync of the lock file', [{ op: 'fsync', path: /\.lock\.[0-9a-f]+\.tmp$/ }]],
    ['the link of the lock file', [{ op: 'link', errno: 'EIO' }]],
    ['the creation of the file', [{ op: 'open', path: /events\.jsonl$/, errno: 'EACCES' }]],
  ];
  for (const [what, plan] of creationFaults) {
    it(`a failure of ${what} rejects the open with write_failed and leaves no lock (TJ-DUR-007, TJ-DUR-017)`, async () => {
      const file = journalPath();
      const fs = faultyFileSystem(nodeFileSystem, plan);
      await expect(AppendFile.open(file, { durability: 'every', fs })).rejects.toMatchObject({ code: 'write_failed' });
      expectOneFaultAndNothingLeft(fs, file);
      await reopenWorks(file);
    });
  }

  // [what fails, the plan, whether the truncation was done before the failure]
  const repairFaults: [string, Parameters<typeof faultyFileSystem>[1], boolean][] = [
    ['the write of the quarantine copy', [{ op: 'write', path: /\.torn\.[0-9a-f]+\.tmp$/, errno: 'ENOSPC' }], false],
    ['the fsync of the quarantine copy', [{ op: 'fsync', path: /\.torn\.[0-9a-f]+\.tmp$/ }], false],
    ['the rename of the quarantine copy', [{ op: 'rename' }], false],
    ['the truncation', [{ op: 'ftruncate', path: /events\.jsonl$/ }], false],
    ['the fsync after the truncation', [{ op: 'fsync', path: /events\.jsonl$/ }], true],
    ['the first read of the tail', [{ op: 'read', path: /events\.jsonl$/ }], false],
  ];
  for (const [what, plan, truncated] of repairFaults) {
    it(`a failure of ${what} during the torn-tail repair leaves no lock, and the next open repairs (TJ-DUR-005)`, async () => {
      const file = journalPath();
      const committed = encodeRecord(eventRecord(0));
      const torn = Buffer.from('{"seq":2,"ts":"2026-01-01T0');
      writeFileSync(file, Buffer.concat([committed, torn]));
      const fs = faultyFileSystem(nodeFileSystem, plan);
      await expect(AppendFile.open(file, { durability: 'every', fs })).rejects.toMatchObject({ code: 'write_failed' });
      expectOneFaultAndNothingLeft(fs, file);
      const writer = await AppendFile.open(file, { durability: 'every' });
      // Once the truncation is done the tail is gone: the next open has nothing left to repair.
      expect(writer.opened.tornTail).toEqual(
        truncated ? null : { length: torn.length, quarantine: `${file}.${committed.length}.torn` },
      );
      await writer.close();
      expect(readFileSync(`${file}.${committed.length}.torn`)).toEqual(torn);
      expect(readFileSync(file)).toEqual(Buffer.from(committed));
    });
  }

  it('a failure while a turn journal reads its file closes the file and releases the lock', async () => {
    const dir = tempDir();
    const first = await openTurnJournal({ dir, sessionId: 's1' });
    await first.submit({ content: 'hello', turnId: 't1' });
    await first.close();
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'read', path: /s1\.jsonl$/, errno: 'EIO' }]);
    await expect(openTurnJournal({ dir, sessionId: 's1', fs })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'read',
    });
    expect(existsSync(join(dir, 's1.jsonl.lock'))).toBe(false);
    const again = await openTurnJournal({ dir, sessionId: 's1' });
    expect(again.stateOf('t1')).toBe('submitted');
    await again.close();
  });
});
