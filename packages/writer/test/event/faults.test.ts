import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore, recoverEventLog } from '@turnjournal/reader';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { type Durability, nodeFileSystem, openEventLog } from '../support/internals.js';
import { readLinesOf } from '../support/space.js';
import { tempDir } from '../support/temp.js';
import { fullFold, propertyParameters, recordsOf, seqsOf, seriousFindings } from './support.js';

const msg = (content: string) => ({ role: 'user', content });

async function settle<T>(promise: Promise<T>): Promise<{ ok: T } | { error: { code?: string } }> {
  return promise.then(
    (ok) => ({ ok }),
    (error: { code?: string }) => ({ error }),
  );
}

describe('event log under injected faults (spec §11.5)', () => {
  for (const errno of ['ENOSPC', 'EIO']) {
    it(`rejects a failed append (${errno}) with write_failed, leaves nothing of it, and reuses its seq (TJ-DUR-022, TJ-DUR-023)`, async () => {
      const file = join(tempDir(), 'events.jsonl');
      const fs = faultyFileSystem(nodeFileSystem);
      const log = await openEventLog({ file, fs });
      await log.appendMessage(msg('kept'));
      // The file's lines: while the log is open the file is longer, by its pre-allocated space (spec §3.8).
      const size = readLinesOf(file).length;
      fs.inject({ op: 'write', path: file, errno, torn: true });
      const failed = log.appendMessage(msg('lost'));
      await expect(failed).rejects.toMatchObject({ code: 'write_failed', errno, operation: 'write', file });
      await log.idle();
      expect(readFileSync(file).length, 'the failed write was truncated away, the space with it (TJ-DUR-023)').toBe(
        size,
      );
      expect(log.snapshot().messages).toEqual([msg('kept')]);
      expect(log.lastSeq).toBe(0);
      expect((await log.appendMessage(msg('retried'))).seq).toBe(1);
      await log.close();
      expect(seqsOf(file)).toEqual([0, 1]);
      expect(seriousFindings(await checkStore([file]))).toEqual([]);
    });
  }

  for (const durability of ['every', 'group', 'none'] as Durability[]) {
    it(`refuses the appends queued behind a failed one so that no seq is skipped (${durability}) (TJ-EVENT-003, TJ-DUR-023)`, async () => {
      const file = join(tempDir(), 'events.jsonl');
      const fs = faultyFileSystem(nodeFileSystem);
      const log = await openEventLog({ file, fs, durability });
      await log.appendMessage(msg('m0'));
      // In `none` mode the six appends, made in one synchronous run, share one write: fail that one. Otherwise the
      // first is written alone and the rest queue behind it: fail the second write.
      fs.inject({ op: 'write', path: file, nth: durability === 'none' ? 1 : 2, errno: 'ENOSPC' });
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => settle(log.appendMessage(msg(`m${i + 1}`)))),
      );
      // The first overlapping append may be written before the failure; every one after the failure is refused.
      const firstFailed = results.findIndex((r) => 'error' in r);
      expect(firstFailed).toBeGreaterThanOrEqual(0);
      for (const result of results.slice(0, firstFailed)) expect('ok' in result).toBe(true);
      // The failed write rejects with write_failed (with its whole group batch); what was queued behind it is refused
      // with append_cancelled (TJ-DUR-030).
      expect(results[firstFailed]).toMatchObject({ error: { code: 'write_failed' } });
      for (const result of results.slice(firstFailed + 1))
        expect(['write_failed', 'append_cancelled']).toContain((result as { error: { code?: string } }).error.code);
      if (durability === 'every')
        for (const result of results.slice(firstFailed + 1))
          expect(result).toMatchObject({ error: { code: 'append_cancelled' } });
      await log.idle();
      const next = await log.appendMessage(msg('after'));
      expect(next.seq).toBe(firstFailed + 1);
      await log.close();
      expect(seqsOf(file)).toEqual([...Array(firstFailed + 2).keys()]);
      const full = await fullFold(file);
      expect(full.findings).toEqual([]);
      expect(full.messages.at(-1)).toEqual(msg('after'));
    });
  }

  it('poisons the writer after a failed fdatasync until it is reopened (TJ-DUR-021)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const fs = faultyFileSystem(nodeFileSystem);
    let log = await openEventLog({ file, fs });
    await log.appendMessage(msg('m0'));
    fs.inject({ op: 'fdatasync', path: file, errno: 'EIO' });
    await expect(log.appendMessage(msg('m1'))).rejects.toMatchObject({ code: 'write_failed', operation: 'fdatasync' });
    await expect(log.appendMessage(msg('m2'))).rejects.toMatchObject({ code: 'writer_poisoned' });
    await expect(log.chatStarted({ requestId: 'r' })).rejects.toMatchObject({ code: 'writer_poisoned' });
    await expect(log.compact()).rejects.toMatchObject({ code: 'writer_poisoned' });
    await log.close();
    // The reopened writer reads what the file holds (the unsynced record may or may not be there) and goes on.
    log = await openEventLog({ file, fs });
    const last = log.lastSeq as number;
    expect((await log.appendMessage(msg('m3'))).seq).toBe(last + 1);
    await log.close();
    expect(seqsOf(file)).toEqual([...Array(last + 2).keys()]);
  });

  it('retries a checkpoint whose write failed with the next append, and says why it failed (TJ-EVENT-006)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    // Records 0..2 are the file's writes 1..3; the checkpoint after them is write 4.
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'write', path: file, nth: 4, errno: 'ENOSPC' }]);
    const log = await openEventLog({ file, fs, checkpointInterval: 3 });
    for (let i = 0; i < 3; i++) await log.appendMessage(msg(`m${i}`));
    await log.idle();
    expect(log.checkpointFailure).toMatchObject({ code: 'write_failed' });
    expect(log.lastSeq).toBe(2);
    await log.appendMessage(msg('m3'));
    await log.idle();
    expect(log.checkpointFailure).toBeNull();
    await log.close();
    expect(recordsOf(file).map((r) => [r.seq, r.type])).toEqual([
      [0, 'message_append'],
      [1, 'message_append'],
      [2, 'message_append'],
      [3, 'message_append'],
      [4, 'checkpoint'],
    ]);
    const recovered = await recoverEventLog(file);
    expect(recovered.checkpointOffset).not.toBeNull();
    expect(recovered.messages).toEqual((await fullFold(file)).messages);
  });

  it('after a checkpoint that cannot be written even split, tries again only per limit of bytes (TJ-EVENT-022)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const limit = 4096;
    const log = await openEventLog({
      file,
      fs: nodeFileSystem,
      durability: 'none',
      checkpointInterval: 3,
      maxLineBytes: limit,
    });
    // A try packs the list into parts and encodes them from the first, which holds the message that cannot fit: count
    // the encodings of a first part.
    let tries = 0;
    const stringify = JSON.stringify;
    const spy = vi.spyOn(JSON, 'stringify').mockImplementation(function (
      this: unknown,
      ...args: Parameters<typeof stringify>
    ) {
      const value = args[0] as { type?: unknown; payload?: { part?: unknown } } | null;
      if (value?.type === 'checkpoint.part' && value.payload?.part === 0) tries += 1;
      return stringify.apply(this, args);
    });
    try {
      // Its message_append line fits the limit; a checkpoint part holding it (a longer envelope) cannot. It is not the
      // log's first record, which also carries the epoch (TJ-EVENT-023).
      await log.appendMessage(msg('a'));
      await log.appendMessage(msg('x'.repeat(limit - 125)));
      const append = async (i: number) => (await log.appendMessage(msg(`m${i} ${'x'.repeat(300)}`))).length;
      let i = 0;
      let bytes = 0;
      while (log.checkpointFailure === null && i < 1000) bytes += await append(i++);
      expect(log.checkpointFailure).toMatchObject({ code: 'line_too_long' });
      const before = tries;
      bytes = 0;
      for (let n = 0; n < 100; n++) bytes += await append(i++);
      expect(tries - before).toBeGreaterThan(0);
      // Every 3 records (about 30 KB appended here) would be about 33 tries.
      expect(tries - before).toBeLessThanOrEqual(Math.ceil(bytes / limit));

      // Once the list can be written again, the next try after a limit of bytes writes the checkpoint.
      await log.replaceMessages([msg('short')]);
      for (let n = 0; n * 40 < limit + 40; n++) await log.appendMessage(msg(`n${n}`));
      await log.idle();
      expect(log.checkpointFailure).toBeNull();
    } finally {
      spy.mockRestore();
    }
    await log.close();
    const types = recordsOf(file).map((r) => r.type);
    expect(types.lastIndexOf('checkpoint')).toBeGreaterThan(types.lastIndexOf('message_edit'));
    const recovered = await recoverEventLog(file, { maxLineBytes: limit });
    expect(recovered.messages).toEqual((await fullFold(file)).messages);
  });

  it('rolls the in-memory state back to the file after a failed write, runs included (TJ-DUR-023, TJ-EVENT-009)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const fs = faultyFileSystem(nodeFileSystem);
    const log = await openEventLog({ file, fs });
    await log.chatStarted({ requestId: 'r1' });
    fs.inject({ op: 'write', path: file, errno: 'ENOSPC' });
    await expect(log.chatDone({ requestId: 'r1' })).rejects.toMatchObject({ code: 'write_failed' });
    await log.idle();
    expect(log.snapshot().activeRun?.requestId).toBe('r1');
    await expect(log.chatStarted({ requestId: 'r2' })).rejects.toMatchObject({ code: 'illegal_transition' });
    expect((await log.chatDone({ requestId: 'r1' })).seq).toBe(1);
    await log.close();
    expect(seriousFindings(await checkStore([file]))).toEqual([]);
  });

  it('keeps every acknowledged record at its seq, with no gap, under random write failures (property) (TJ-DUR-024, TJ-EVENT-003)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          durability: fc.constantFrom<Durability>('every', 'group', 'none'),
          interval: fc.integer({ min: 2, max: 6 }),
          bursts: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 8 }),
          failing: fc.uniqueArray(fc.nat(30), { maxLength: 6 }),
          partial: fc.boolean(),
        }),
        async ({ durability, interval, bursts, failing, partial }) => {
          const file = join(tempDir('tj-event-fault-'), 'events.jsonl');
          // `failing` are 0-based numbers of the file's writes.
          const fs = faultyFileSystem(
            nodeFileSystem,
            failing.map((n) => ({
              op: 'write',
              path: file,
              nth: n + 1,
              errno: 'ENOSPC',
              ...(partial ? { torn: true } : {}),
            })),
          );
          const log = await openEventLog({ file, fs, durability, checkpointInterval: interval });
          const acknowledged = new Map<number, string>();
          let counter = 0;
          for (const size of bursts) {
            const contents = Array.from({ length: size }, () => `c${counter++}`);
            const results = await Promise.all(contents.map((content) => settle(log.appendMessage(msg(content)))));
            results.forEach((result, i) => {
              if ('ok' in result) acknowledged.set(result.ok.seq, contents[i] as string);
              else expect(['write_failed', 'append_cancelled']).toContain(result.error.code);
            });
            await log.idle();
          }
          const mine = log.snapshot();
          await log.close();
          const records = recordsOf(file);
          expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
          const bySeq = new Map(records.map((r) => [r.seq as number, r]));
          for (const [seq, content] of acknowledged) expect(bySeq.get(seq)?.payload).toEqual({ message: msg(content) });
          const full = await fullFold(file);
          expect(full.messages).toEqual(mine.messages);
          expect(full.lastSeq).toBe(mine.lastSeq);
          expect((await recoverEventLog(file)).messages).toEqual(full.messages);
          expect(seriousFindings(await checkStore([file]))).toEqual([]);
        },
      ),
      propertyParameters(),
    );
  }, 60_000);
});
